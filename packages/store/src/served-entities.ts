import { sql, type Kysely } from 'kysely';
import { AmbiguousEntityError, memberEntityName, type EntityKind } from '@cairn/engine';
import {
  DEFAULT_CHECKPOINT_MODE,
  isEntityPath,
  type EntityCatalog,
  type EntityInfo,
  type EntityRef,
} from '@cairn/engine/store';
import { EntityNotServedError } from './errors.js';
import type { Database } from './schema.js';

/** How often a worker refreshes the last-seen time of the entities it serves (`apps/worker`'s heartbeat). */
export const ENTITY_HEARTBEAT_MS = 30_000;

/** An announcement refreshed within this long is a live worker's: two missed heartbeats and a half. */
const LIVE_ANNOUNCEMENT_MS = ENTITY_HEARTBEAT_MS * 2.5;

/** An announcement refreshed within {@link LIVE_ANNOUNCEMENT_MS}: a live worker's. */
const isLive = sql<boolean>`last_seen_at > now() - make_interval(secs => ${LIVE_ANNOUNCEMENT_MS / 1000})`;

/** How many of the entities live workers serve a refusal names (the rest it counts). */
const SERVED_SHOWN = 10;

/** The stored `definition_hash` of an announcement without one (it is part of the primary key, so never null). */
const NO_DEFINITION_HASH = '';

/** A stored `definition_hash` as the engine sees it: null when the worker gave none. */
function hashOf(stored: string): string | null {
  return stored === NO_DEFINITION_HASH ? null : stored;
}

/** An entity a worker announced, as the store holds it. */
export interface ServedEntity extends EntityInfo {
  /** The worker that announced it last. */
  workerId: string;
  firstSeenAt: Date;
  lastSeenAt: Date;
}

/** What a worker announces of one entity it serves: its registry's {@link EntityInfo}, definition hash included. */
export type ServedEntityAnnouncement = EntityInfo;

/**
 * The agents and teams workers serve, as they recorded them: workers
 * {@link ServedEntityCatalog.record | record} theirs at start and while they
 * run; a producer validates entity names against it without loading any
 * tool code or model key.
 */
export class ServedEntityCatalog implements EntityCatalog {
  constructor(private readonly db: Kysely<Database>) {}

  /** Records (or refreshes the last-seen time of) every entity `workerId` serves. */
  async record(workerId: string, entities: readonly ServedEntityAnnouncement[]): Promise<void> {
    if (entities.length === 0) return;
    await this.db
      .insertInto('served_entities')
      .values(
        entities.map((e) => ({
          entity_kind: e.kind,
          entity_name: e.name,
          definition_hash: e.definitionHash ?? NO_DEFINITION_HASH,
          checkpoint: e.checkpoint,
          max_duration_ms: e.maxDurationMs ?? null,
          budget: e.budget ? JSON.stringify(e.budget) : null,
          caps: e.caps ? JSON.stringify(e.caps) : null,
          worker_id: workerId,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['entity_kind', 'entity_name', 'definition_hash']).doUpdateSet({
          checkpoint: (eb) => eb.ref('excluded.checkpoint'),
          // Not part of the definition hash: the worker that announced it last tells it.
          max_duration_ms: (eb) => eb.ref('excluded.max_duration_ms'),
          budget: (eb) => eb.ref('excluded.budget'),
          caps: (eb) => eb.ref('excluded.caps'),
          worker_id: (eb) => eb.ref('excluded.worker_id'),
          last_seen_at: sql<Date>`now()`,
        }),
      )
      .execute();
  }

  /**
   * The entity as workers announce it. Its definition hash, the one new runs
   * are stamped with, is the newest definition live workers serve (first
   * announced last, among those refreshed within a few heartbeats): during a
   * rolling deploy new runs go to the new workers, and after a rollback to
   * the old ones again; with no live worker, the one announced last. Throws
   * {@link AmbiguousEntityError} for a plain name no worker serves because
   * several members share it (workers announce those by path only), listing
   * their paths.
   *
   * A name no worker ever announced: while no live worker has announced
   * anything (a fresh deploy whose workers are still starting, or every
   * worker down), it is described with no definition hash (the first worker
   * to claim its run stamps its own) and the default checkpoint mode, so the
   * run waits in the queue; a worker that lacks the entity ends the run in
   * ERROR after its version grace period. Once live workers have announced
   * their entities, it throws {@link EntityNotServedError} listing them.
   */
  async describe(ref: EntityRef): Promise<EntityInfo> {
    const row = await this.db
      .selectFrom('served_entities')
      .select([
        'entity_kind',
        'entity_name',
        'checkpoint',
        'definition_hash',
        'max_duration_ms',
        'budget',
        'caps',
      ])
      .where('entity_kind', '=', ref.kind)
      .where('entity_name', '=', ref.name)
      .orderBy(isLive, 'desc')
      // First announced last among the live ones only: with none live, the one refreshed last.
      .orderBy(sql`case when ${isLive} then first_seen_at end desc nulls last`)
      .orderBy('last_seen_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (row)
      return {
        kind: row.entity_kind,
        name: row.entity_name,
        checkpoint: row.checkpoint,
        definitionHash: hashOf(row.definition_hash),
        ...(row.max_duration_ms !== null && { maxDurationMs: row.max_duration_ms }),
        ...(row.budget !== null && { budget: row.budget }),
        ...(row.caps !== null && { caps: row.caps }),
      };
    if (!isEntityPath(ref.name)) {
      const paths = await this.memberPathsNamed(ref);
      if (paths.length > 1) throw new AmbiguousEntityError(ref.kind, ref.name, paths);
    }
    const served = await this.liveEntities(ref.kind);
    if (served.count > 0)
      throw new EntityNotServedError(ref.kind, ref.name, served.shown, served.count);
    return {
      kind: ref.kind,
      name: ref.name,
      checkpoint: DEFAULT_CHECKPOINT_MODE,
      definitionHash: null,
    };
  }

  /**
   * How many entities live workers serve, and the first {@link SERVED_SHOWN}
   * of them: those of `kind` first, top-level names before member paths, by name.
   */
  private async liveEntities(kind: EntityKind): Promise<{ shown: EntityRef[]; count: number }> {
    const rows = await this.db
      .selectFrom('served_entities')
      .select(['entity_kind', 'entity_name', sql<string>`count(*) over ()`.as('count')])
      .where(isLive)
      .groupBy(['entity_kind', 'entity_name'])
      .orderBy(sql`entity_kind <> ${kind}`)
      .orderBy(sql`strpos(entity_name, '/') > 0`)
      .orderBy('entity_name')
      .limit(SERVED_SHOWN)
      .execute();
    return {
      shown: rows.map((r) => ({ kind: r.entity_kind, name: r.entity_name })),
      count: Number(rows[0]?.count ?? 0),
    };
  }

  /** The served member paths whose last name is `ref.name` (`team-a/researcher` for `researcher`). */
  private async memberPathsNamed(ref: EntityRef): Promise<string[]> {
    const suffix = memberEntityName('', ref.name);
    const rows = await this.db
      .selectFrom('served_entities')
      .select('entity_name')
      .distinct()
      .where('entity_kind', '=', ref.kind)
      .where(sql<string>`right(entity_name, ${suffix.length})`, '=', suffix)
      .orderBy('entity_name')
      .execute();
    return rows.map((r) => r.entity_name);
  }

  /** The top-level entities live workers serve (not member paths), by kind and name. */
  async live(): Promise<EntityRef[]> {
    const rows = await this.db
      .selectFrom('served_entities')
      .select(['entity_kind', 'entity_name'])
      .distinct()
      .where(isLive)
      .where(sql<boolean>`strpos(entity_name, '/') = 0`)
      .orderBy('entity_kind')
      .orderBy('entity_name')
      .execute();
    return rows.map((r) => ({ kind: r.entity_kind, name: r.entity_name }));
  }

  /** Every entity ever served (one row per definition), most recently seen first. */
  async list(): Promise<ServedEntity[]> {
    const rows = await this.db
      .selectFrom('served_entities')
      .selectAll()
      .orderBy('last_seen_at', 'desc')
      .execute();
    return rows.map((row) => ({
      kind: row.entity_kind,
      name: row.entity_name,
      checkpoint: row.checkpoint,
      definitionHash: hashOf(row.definition_hash),
      ...(row.max_duration_ms !== null && { maxDurationMs: row.max_duration_ms }),
      ...(row.budget !== null && { budget: row.budget }),
      ...(row.caps !== null && { caps: row.caps }),
      workerId: row.worker_id,
      firstSeenAt: row.first_seen_at,
      lastSeenAt: row.last_seen_at,
    }));
  }
}
