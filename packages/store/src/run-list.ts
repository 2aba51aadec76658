import { sql } from 'kysely';
import type { Expression, Kysely, SqlBool } from 'kysely';
import { FINAL_STATUSES, type EntityKind, type RunStatus } from '@cairn/engine';
import { toRunSummaryView, type RunSummaryView } from './run-view.js';
import type { Database } from './schema.js';
import { searchTextMatch } from './search-chunks.js';

/** The columns the run list sorts by. */
export const RUN_LIST_SORT_KEYS = ['created', 'updated', 'status', 'entity'] as const;

/** A column the run list sorts by. */
export type RunListSortKey = (typeof RUN_LIST_SORT_KEYS)[number];

/** How the run list is ordered. */
export interface RunListSort {
  key: RunListSortKey;
  direction: 'asc' | 'desc';
}

/** What a held run waits for: a person (PAUSED on a pending action), model capacity (parked RUNNING), or either. */
export type RunListWaitingFilter = 'person' | 'capacity' | 'either';

/**
 * How many leading characters of a top-level run's input the text search
 * reads: `run_search_texts` holds these, written once with the run (migration
 * 0015_a), so that a long input (a document) costs its trigrams once.
 */
export const SEARCHED_INPUT_CHARS = 2000;

/** The shortest search the input is searched for (trigrams); a shorter one matches run ids only. */
export const MIN_INPUT_SEARCH_CHARS = 3;

/** Which runs {@link listRuns} returns, and in which order. */
export interface RunListFilter {
  /** Only runs in one of these statuses; empty or absent: every status. */
  statuses?: readonly RunStatus[];
  /** Only runs of this entity name (an agent or a team). */
  entityName?: string;
  /** Only runs of this entity kind. */
  entityKind?: EntityKind;
  /** Only this tenant's runs (a tenant-bound key's view, or an admin's tenant filter); absent: every run. */
  tenantId?: string;
  /** Only these runs (a bulk action's selection); absent: any. */
  runIds?: readonly string[];
  /** Only runs held: PAUSED for a person, parked for model capacity, or either. */
  waitingFor?: RunListWaitingFilter;
  /** Only runs created at or after this instant. */
  createdFrom?: Date;
  /** Only runs created before this instant. */
  createdBefore?: Date;
  /** Only finished runs (a final status) that ended at or after this instant (a finished run's `updated_at` is its end). */
  endedFrom?: Date;
  /** Only finished runs (a final status) that ended before this instant. */
  endedBefore?: Date;
  /**
   * Only runs taken over from a dead worker at least once (an attempt with
   * reason `recovered`); with a range, by an attempt started in it.
   */
  recovered?: { from?: Date; before?: Date };
  /**
   * Only runs whose id starts with this text, or whose input (its first
   * {@link SEARCHED_INPUT_CHARS} characters) contains it, case-insensitively;
   * the input is searched for {@link MIN_INPUT_SEARCH_CHARS} characters or more.
   */
  search?: string;
  /**
   * The order; ties are broken by creation (status, entity) and then run id, in the same direction.
   * @defaultValue newest first
   */
  sort?: RunListSort;
  /**
   * Only top-level runs (member runs are reached through their team).
   * @defaultValue true
   */
  topLevelOnly?: boolean;
  /** How many runs to skip. @defaultValue 0 */
  offset?: number;
  /** How many runs at most. */
  limit: number;
}

/** One page of {@link listRuns}. */
export interface RunListPage {
  runs: RunSummaryView[];
  /** True when runs past this page match the filter. */
  hasMore: boolean;
}

/** The columns each sort orders by, the run id last: a total order, so offset pages neither skip nor repeat a run. */
const SORT_COLUMNS = {
  created: ['created_at', 'run_id'],
  updated: ['updated_at', 'run_id'],
  // The top-level (status, updated_at) index hands rows out in this order.
  status: ['status', 'updated_at', 'run_id'],
  entity: ['entity_name', 'created_at', 'run_id'],
} as const satisfies Record<RunListSortKey, readonly string[]>;

/**
 * A page of run summaries matching `filter`, in its order (one query). Every
 * filter and sort is answered from an index of migrations 0005_b, 0007_e,
 * 0013_l and 0014_o.
 */
export async function listRuns(db: Kysely<Database>, filter: RunListFilter): Promise<RunListPage> {
  let query = db.selectFrom('runs').selectAll();
  if (filter.statuses && filter.statuses.length > 0)
    query = query.where('status', 'in', filter.statuses);
  if (filter.entityName !== undefined) query = query.where('entity_name', '=', filter.entityName);
  if (filter.entityKind !== undefined) query = query.where('entity_kind', '=', filter.entityKind);
  if (filter.tenantId !== undefined) query = query.where('tenant_id', '=', filter.tenantId);
  if (filter.runIds !== undefined)
    query =
      filter.runIds.length > 0
        ? query.where('run_id', 'in', filter.runIds)
        : query.where(sql<SqlBool>`false`);
  if (filter.topLevelOnly !== false) query = query.where('parent_run_id', 'is', null);
  if (filter.createdFrom !== undefined) query = query.where('created_at', '>=', filter.createdFrom);
  if (filter.createdBefore !== undefined)
    query = query.where('created_at', '<', filter.createdBefore);
  if (filter.endedFrom !== undefined || filter.endedBefore !== undefined) {
    // Literal statuses: `runs_top_level_status_updated_idx` (status, updated_at) reads the range.
    query = query.where(
      sql<SqlBool>`status in (${sql.join(FINAL_STATUSES.map((s) => sql.lit(s)))})`,
    );
    if (filter.endedFrom !== undefined) query = query.where('updated_at', '>=', filter.endedFrom);
    if (filter.endedBefore !== undefined)
      query = query.where('updated_at', '<', filter.endedBefore);
  }
  if (filter.recovered !== undefined) {
    const { from, before } = filter.recovered;
    // The predicate of `run_attempts_recovered_idx` (started_at) where reason = 'recovered': the
    // recovered runs (few) are read from it once, as an array, and then by the runs' primary key
    // (`= any`), which keeps any other filter (a text search too) from scanning runs.
    query = query.where(
      sql<SqlBool>`run_id = any(array(select a.run_id from run_attempts a where a.reason = 'recovered'${
        from === undefined ? sql`` : sql` and a.started_at >= ${from}`
      }${before === undefined ? sql`` : sql` and a.started_at < ${before}`}))`,
    );
  }
  if (filter.waitingFor !== undefined) {
    const waitingFor = filter.waitingFor;
    query = query.where((eb) => {
      const person = eb('status', '=', 'PAUSED');
      const capacity = eb('waiting', 'is not', null);
      if (waitingFor === 'person') return person;
      if (waitingFor === 'capacity') return capacity;
      return eb.or([person, capacity]);
    });
  }
  if (filter.search !== undefined && filter.search !== '') {
    const search = filter.search;
    const byInput =
      search.length < MIN_INPUT_SEARCH_CHARS
        ? undefined
        : await searchTextMatch(db, `%${likeEscaped(search)}%`);
    query = query.where((eb) => {
      const byId: Expression<SqlBool> = sql<SqlBool>`run_id like ${`${likeEscaped(search)}%`}`;
      return byInput === undefined ? byId : eb.or([byId, byInput]);
    });
  }
  const { key, direction } = filter.sort ?? { key: 'created', direction: 'desc' };
  for (const column of SORT_COLUMNS[key]) query = query.orderBy(column, direction);
  const rows = await query
    .offset(filter.offset ?? 0)
    .limit(filter.limit + 1)
    .execute();
  return {
    runs: rows.slice(0, filter.limit).map(toRunSummaryView),
    hasMore: rows.length > filter.limit,
  };
}

/** `text` as a LIKE pattern matching it literally (`\` is LIKE's default escape). */
function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
