import { sql } from 'kysely';
import type { Kysely, RawBuilder } from 'kysely';
import { LeaseLostError, type ToolCallRecord } from '@cairn/engine';
import { EXECUTING_STATUS, type CheckpointDelta, type RunOutcome } from '@cairn/engine/store';
import { continueFragments } from './continue-requests.js';
import { committedCallsJson, type CallToCommit } from './committed-calls.js';
import { insertCommit, MESSAGES_PER_COMMIT_ROW } from './run-commits.js';
import { RUN_RECORD_COLUMNS, type RunRecordRow } from './run-row.js';
import { storedDeltaEvents } from './stored-delta-events.js';
import { tenantModelDaySpend } from './tenant-model-day-spend.js';
import { storedUsageByModel, storedUsageCost, storedUsageJson } from './usage-column.js';
import type { Database, RunRow, ToolCallsTable } from './schema.js';

/** The tool-call columns the writer sends as a JSON recordset, with their SQL types (checked against the table). */
const CALL_COLUMNS = {
  tool_call_id: 'text',
  name: 'text',
  args: 'jsonb',
  result: 'text',
  status: 'text',
  batch: 'int',
  idempotency_key: 'text',
  child_run_id: 'text',
  started_at: 'timestamptz',
  ended_at: 'timestamptz',
} as const satisfies { readonly [K in keyof ToolCallsTable]?: string };

type CallColumn = keyof typeof CALL_COLUMNS;

/**
 * One tool call in the recordset; `result_ord` is the 1-based position in the delta's messages of
 * the tool message holding its result; `fold`: stored in the write's `run_commits` row (final, in a
 * write that stores a row), unless an earlier write stored it `running` (its row is updated).
 */
type CallJson = { [K in CallColumn]: CallToCommit[K] } & {
  result_ord: number | null;
  fold: boolean;
};

const COLUMNS = Object.keys(CALL_COLUMNS) as CallColumn[];
const RECORDSET = sql.raw(
  `${COLUMNS.map((c) => `${c} ${CALL_COLUMNS[c]}`).join(', ')}, result_ord int, fold boolean`,
);
const INSERT_COLUMNS = sql.raw(COLUMNS.join(', '));
const SELECT_COLUMNS = sql.raw(COLUMNS.map((c) => `c.${c}`).join(', '));
/** What a `running` row takes from its final record (the key stays). */
const UPDATE_SET = sql.raw(
  COLUMNS.filter((c) => c !== 'tool_call_id' && c !== 'started_at')
    .map((c) => `${c} = c.${c}`)
    .join(', '),
);

/** The columns of the fenced update that the statement's other parts read as `run.<column>`. */
const RUN_COLUMNS = sql.raw(
  (
    [
      'run_id',
      'last_checkpoint_at_message_index',
      'event_seq',
      'tenant_id',
      'usage',
    ] as const satisfies readonly (keyof RunRow)[]
  ).join(', '),
);
/** A finish's: those and the run it returns. */
const FINISH_RUN_COLUMNS = sql.raw([...new Set([...RUN_RECORD_COLUMNS, 'event_seq'])].join(', '));
const FINISH_RETURNS = sql.raw(RUN_RECORD_COLUMNS.join(', '));
const CHECKPOINT_RETURNS = sql.raw('last_checkpoint_at_message_index' satisfies keyof RunRecordRow);

/**
 * A checkpoint moves `updated_at` only when it is older than this: a run's
 * progress shows there within it, and the commits in between change no indexed
 * column of `runs`, so their UPDATE is HOT (no new entry in any of its indexes).
 * Well under the reconciler's 15 s threshold for a RUNNING run "not updated".
 */
const PROGRESS_UPDATED_AT_EVERY_MS = 5_000;

const PROGRESS_UPDATED_AT = sql`case when updated_at < now() - make_interval(secs => ${
  PROGRESS_UPDATED_AT_EVERY_MS / 1000
}) then now() else updated_at end`;

/** How a finish ends the run, besides its delta. */
export type DeltaFinish = Pick<RunOutcome, 'status' | 'content' | 'error'>;

/**
 * The one writer of a checkpoint delta, for a checkpoint and for a finish:
 * ONE statement (its own transaction unless `db` is one). The fenced UPDATE
 * of the run advances its message index and event sequence (a HOT update for
 * a checkpoint) and every insert selects from it, so when `epoch` no longer
 * holds the run nothing at all is written and `LeaseLostError` is thrown.
 * It appends the messages, the delta's events and its calls stored final
 * (one `run_commits` row), stores each tool result once (in its tool
 * message), inserts calls still running in `tool_call_rows` and updates
 * the `running` rows of calls that finished, and adds what the delta
 * cost to its tenant's UTC day; a finish also sets the final status and ends
 * the attempt. Its cost depends on the delta only. Returns the run's new
 * message index (a checkpoint) or the run (a finish).
 */
export async function writeDelta(
  db: Kysely<Database>,
  runId: string,
  epoch: number,
  delta: CheckpointDelta,
): Promise<number>;
export async function writeDelta(
  db: Kysely<Database>,
  runId: string,
  epoch: number,
  delta: CheckpointDelta,
  finish: DeltaFinish,
): Promise<RunRecordRow>;
export async function writeDelta(
  db: Kysely<Database>,
  runId: string,
  epoch: number,
  delta: CheckpointDelta,
  finish?: DeltaFinish,
): Promise<number | RunRecordRow> {
  const n = delta.messages.length;
  const events = delta.events ?? [];
  const k = events.length;
  const ctes: RawBuilder<unknown>[] = [];
  // A write that stores a row takes its calls stored final into it; a call stored `running` earlier keeps its row.
  const storesRow = n > 0 || k > 0;
  const calls = latestCalls(delta, storesRow);
  if (calls.length > 0) {
    const resultIdx = sql`run.last_checkpoint_at_message_index - ${n} + c.result_ord - 1`;
    ctes.push(
      sql`delta_calls as (select * from jsonb_to_recordset(${JSON.stringify(calls)}::jsonb) as c(${RECORDSET}))`,
      sql`finished_calls as (
        update tool_call_rows t set ${UPDATE_SET}, epoch = ${epoch}, result_message_idx = ${resultIdx}
          from run, delta_calls c
         where t.run_id = run.run_id and t.tool_call_id = c.tool_call_id
        returning t.tool_call_id)`,
      sql`new_calls as (
        insert into tool_call_rows (run_id, ${INSERT_COLUMNS}, epoch, result_message_idx)
        select run.run_id, ${SELECT_COLUMNS}, ${epoch}, ${resultIdx}
          from run, delta_calls c
         where not c.fold and c.tool_call_id not in (select tool_call_id from finished_calls))`,
    );
  }
  if (storesRow) {
    // One row for the write's messages, events and final calls (several past 64 messages); derived
    // events (a call started or completed, the commit) compact, read back whole by `run-events.ts`.
    const folded = committedCallsJson(
      runId,
      calls.filter((c) => c.fold).map((c) => ({ ...c, epoch })),
      delta.messages.slice(0, MESSAGES_PER_COMMIT_ROW),
    );
    ctes.push(
      sql`new_commit as (${insertCommit(
        delta.messages,
        storedDeltaEvents(events),
        sql`run`,
        folded === null
          ? sql`null`
          : sql`(select json_agg(e) from json_array_elements(${folded}::json) as e
                  where e ->> 'id' not in (select tool_call_id from finished_calls))`,
        folded === null ? 0 : Buffer.byteLength(folded),
      )})`,
    );
  }
  const cost = delta.usage.costMicroUsd ?? 0;
  if (cost > 0) ctes.push(...tenantDaySpend(runId, cost));
  const continued = continueFragments(
    runId,
    epoch,
    delta.appliesContinueRequest,
    finish?.status,
    delta.keepsContinueRequest,
  );
  if (continued.cte) ctes.push(continued.cte);
  // A finish ends the attempt with the run's status; a park (the run stays RUNNING) with `parked`.
  const attemptOutcome = finish ? finish.status.toLowerCase() : delta.park && 'parked';
  if (attemptOutcome) {
    ctes.push(sql`ended_attempt as (
      update run_attempts a set ended_at = now(), outcome = ${attemptOutcome}
        from run where a.run_id = run.run_id and a.epoch = ${epoch})`);
  }
  const final = finish
    ? sql`, status = ${finish.status}, content = ${finish.content}, error = ${finish.error && JSON.stringify(finish.error)}::jsonb${
        // A suspend asked for and not reached is void once the run ends; a pause keeps it for its resume.
        finish.status === 'PAUSED' ? sql`` : sql`, suspend_request = null`
      }`
    : delta.park
      ? sql`, waiting = ${JSON.stringify(delta.park)}::jsonb`
      : sql``;
  const lifecycleMove =
    finish !== undefined || delta.park !== undefined || continued.cte !== undefined;
  // By name, never `*`: a checkpoint sends back its new index only, a finish the run.
  const returned = finish ? FINISH_RETURNS : CHECKPOINT_RETURNS;
  const { rows } = await sql<RunRecordRow>`
    with run as (
      update runs
         set last_checkpoint_at_message_index = last_checkpoint_at_message_index + ${n},
             usage = ${storedUsageJson(delta.usage)}::json,
             event_seq = event_seq + ${k},
             updated_at = ${lifecycleMove ? sql`now()` : PROGRESS_UPDATED_AT}${final}${continued.set}
       where run_id = ${runId} and epoch = ${epoch} and status = ${sql.lit(EXECUTING_STATUS)}${continued.where}
      returning ${finish ? FINISH_RUN_COLUMNS : RUN_COLUMNS}
    )${sql.join(
      ctes.map((cte) => sql`, ${cte}`),
      sql``,
    )}
    select ${returned} from run`.execute(db);
  const row = rows[0];
  if (!row) throw new LeaseLostError(runId, epoch);
  return finish ? row : row.last_checkpoint_at_message_index;
}

/**
 * The commit's cost added to its tenant's UTC day (`tenant_day_spend`), by
 * the database's clock: what the run's cumulative cost `cost` adds to the
 * cost stored before this statement, only when that is positive and the run
 * has a tenant, and each model's part of it to `tenant_model_day_spend`. The
 * `prior_cost` read sees the row as it was before the fenced update (one
 * snapshot for the whole statement).
 */
function tenantDaySpend(runId: string, cost: number): RawBuilder<unknown>[] {
  return [
    sql`prior_cost as (
      select ${storedUsageCost(sql`usage`)} as cost, ${storedUsageByModel(sql`usage`)} as by_model
        from runs where run_id = ${runId})`,
    sql`tenant_spend as (
      insert into tenant_day_spend (tenant_id, day, cost_micro_usd)
      select run.tenant_id, (now() at time zone 'utc')::date, ${cost}::bigint - prior_cost.cost
        from run, prior_cost
       where run.tenant_id is not null and ${cost}::bigint > prior_cost.cost
      on conflict (tenant_id, day) do update
        set cost_micro_usd = tenant_day_spend.cost_micro_usd + excluded.cost_micro_usd)`,
    tenantModelDaySpend(),
  ];
}

/** The delta's calls, the latest record of each id, each result stored once: in its tool message when the delta has it. */
function latestCalls(delta: CheckpointDelta, storesRow: boolean): CallJson[] {
  const latest = [...new Map(delta.toolCalls.map((c) => [c.toolCallId, c])).values()];
  return latest.map((call) => {
    const ord = resultMessageOrd(delta, call);
    return {
      tool_call_id: call.toolCallId,
      name: call.name,
      args: call.args ?? null,
      result: ord === null ? call.result : null,
      status: call.status,
      batch: call.batch,
      idempotency_key: call.idempotencyKey,
      child_run_id: call.childRunId,
      started_at: call.startedAt,
      ended_at: call.endedAt,
      result_ord: ord,
      fold: storesRow && call.status !== 'running',
    };
  });
}

function resultMessageOrd(delta: CheckpointDelta, call: ToolCallRecord): number | null {
  if (call.result === null) return null;
  const index = delta.messages.findIndex(
    (m) => m.role === 'tool' && m.toolCallId === call.toolCallId && m.content === call.result,
  );
  return index < 0 ? null : index + 1;
}
