import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { type RunStatus } from '@cairn/engine';
import { runEntityPath } from '@cairn/engine/store';
import { ROOT_COPIED_ACTION_EVENTS } from './pending-actions.js';
import { eventsOfRows, type EventRow, type StoredEvent } from './run-events.js';
import type { Database } from './schema.js';

/** A run of a run tree (the root, or a member run below it). */
export interface RunTreeNode {
  runId: string;
  parentRunId: string | null;
  status: RunStatus;
  /** Entity names from the root run down to this one: `['research-team', 'researcher']`. */
  memberPath: string[];
  createdAt: Date;
}

/**
 * The last seq already read of each run of a tree (0 or missing: from its
 * start): by position in the tree's order (`[rootSeq, ...]`, a cursor longer
 * than the tree is ignored past its end), by run id, or asked of a function
 * for each run id.
 */
export type RunTreeCursor =
  readonly number[] | ReadonlyMap<string, number> | ((runId: string) => number);

/** What {@link readRunTreeEvents} read: the tree in its stable order, and the events after the cursor. */
export interface RunTreeEvents {
  /** The root first, then every run below it by `created_at`, `run_id` (runs never change `created_at`, so the order is stable). */
  runs: RunTreeNode[];
  /**
   * The events of the tree's runs after the cursor: each run's in seq order,
   * interleaved across runs by the time they were stored.
   */
  events: StoredEvent[];
}

/**
 * The tree of `rootRunId` and its events after `after`, in two statements:
 * one recursive read of the tree, one read of the events after each run's
 * cursor ({@link RunTreeCursor}).
 * The root's stream holds a copy of its members' ActionDecided and
 * ActionExpired, so the members' own are left out (each decision once).
 * Returns undefined when there is no such run.
 */
export async function readRunTreeEvents(
  db: Kysely<Database>,
  rootRunId: string,
  after: RunTreeCursor,
): Promise<RunTreeEvents | undefined> {
  const { rows } = await sql<{
    run_id: string;
    parent_run_id: string | null;
    entity_name: string;
    status: RunStatus;
    created_at: Date;
    depth: number;
  }>`
    with recursive tree(run_id, parent_run_id, entity_name, status, created_at, depth) as (
      select run_id, parent_run_id, entity_name, status, created_at, 0 from runs where run_id = ${rootRunId}
      union all
      select r.run_id, r.parent_run_id, r.entity_name, r.status, r.created_at, tree.depth + 1
        from runs r join tree on r.parent_run_id = tree.run_id
    )
    select * from tree order by depth = 0 desc, created_at, run_id`.execute(db);
  if (rows.length === 0) return undefined;
  const paths = new Map<string, string[]>();
  const pathOf = (row: (typeof rows)[number]): string[] => {
    const known = paths.get(row.run_id);
    if (known) return known;
    const parent =
      row.parent_run_id === null || row.depth === 0
        ? undefined
        : rows.find((r) => r.run_id === row.parent_run_id);
    const path = runEntityPath(row.entity_name, parent && pathOf(parent));
    paths.set(row.run_id, path);
    return path;
  };
  const runs = rows.map((row) => ({
    runId: row.run_id,
    parentRunId: row.parent_run_id,
    status: row.status,
    memberPath: pathOf(row),
    createdAt: row.created_at,
  }));
  const ids = runs.map((r) => r.runId);
  const seqs = runs.map(
    (run, i) =>
      (typeof after === 'function'
        ? after(run.runId)
        : after instanceof Map
          ? after.get(run.runId)
          : (after as readonly number[])[i]) ?? 0,
  );
  // A root run's stream holds a copy of its members' action events: theirs are left out of its merged stream.
  const copied: readonly string[] =
    rows[0]!.parent_run_id === null ? [...ROOT_COPIED_ACTION_EVENTS] : [];
  // `at` ranks the events by time in microseconds (a JS Date keeps milliseconds).
  const { rows: stored } = await sql<EventRow & { after: number; at: string }>`
    select e.run_id, e.first_seq, e.events, e.created_at, c.seq as after,
           rank() over (order by e.created_at) as at
      from run_commits e
      join unnest(${ids}::text[], ${seqs}::int[]) as c(run_id, seq)
        on e.run_id = c.run_id and e.last_seq > c.seq and e.events is not null
     order by e.run_id, e.last_seq, e.end_idx`.execute(db);
  const events = stored.flatMap((row) =>
    eventsOfRows([row])
      .filter((event) => event.seq > row.after)
      .filter((event) => row.run_id === rootRunId || !copied.includes(event.type))
      .map((event) => ({ event, at: Number(row.at) })),
  );
  return { runs, events: interleaveByTime(events) };
}

/**
 * Merges per-run event lists (given grouped by run, each in seq order) into
 * one list by time rank: a run's order is kept whatever its times (a writer
 * that waited on the run's row lock stores a later seq with an earlier
 * transaction time).
 */
function interleaveByTime(events: readonly { event: StoredEvent; at: number }[]): StoredEvent[] {
  const queues = new Map<string, { event: StoredEvent; at: number }[]>();
  for (const ranked of events) {
    const queue = queues.get(ranked.event.runId) ?? [];
    queue.push(ranked);
    queues.set(ranked.event.runId, queue);
  }
  const heads = [...queues.values()];
  const merged: StoredEvent[] = [];
  while (merged.length < events.length) {
    let next = heads.find((q) => q.length > 0)!;
    for (const queue of heads) if (queue.length > 0 && queue[0]!.at < next[0]!.at) next = queue;
    merged.push(next.shift()!.event);
  }
  return merged;
}
