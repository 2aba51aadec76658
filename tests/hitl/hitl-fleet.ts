import { sql } from 'kysely';
import {
  FINAL_STATUSES,
  isStatusIn,
  type PendingActionRecord,
  type RunRecord,
} from '@cairn/engine';
import type { RunView } from '@cairn/store';
import type { QueueBackendKind } from '@cairn/runtime';
import {
  FLEET_BACKEND,
  startFleet,
  waitFor,
  type Fleet,
  type SpawnedProducer,
} from '../fleet/fleet.js';

/** The ops example's registry, loaded by the workers and the client. */
export const OPS_REGISTRY = '@cairn/ops-agent';
/** The ops agent. */
export const OPS_AGENT = { kind: 'agent', name: 'ops-agent' } as const;
/** The ops team, whose member is the ops agent. */
export const OPS_TEAM = { kind: 'team', name: 'ops-team' } as const;

/** A fleet on the ops registry whose workers write the Postgres tool ledger. */
export interface OpsFleet extends Fleet {
  workerEnv: Record<string, string>;
  /** The producer processes started with the fleet (`producers`), p1, p2, ... */
  producers: SpawnedProducer[];
  /** Rows of `ops_tool_ledger`, in the order the executions happened. */
  ledgerRows(): Promise<{ tool: string; idempotency_key: string; args: { service: string } }[]>;
}

/**
 * Starts a fleet on the ops registry (or another with the ops tools, `registryModule`) with
 * `workers` worker processes (default 1) and `producers` producer processes (default 0), all side by side.
 */
export async function startOpsFleet(
  options: {
    workers?: number;
    producers?: number;
    env?: Record<string, string>;
    registryModule?: string;
    /** @defaultValue {@link FLEET_BACKEND} */
    backend?: QueueBackendKind;
  } = {},
): Promise<OpsFleet> {
  const fleet = await startFleet({
    backend: options.backend ?? FLEET_BACKEND,
    registryModule: options.registryModule ?? OPS_REGISTRY,
  });
  const workerEnv = { OPS_LEDGER_URL: fleet.db.url, ...options.env };
  // Side by side: each start takes seconds of CPU; `fleet.workers` keeps the order w1, w2, ...
  const [producers] = await Promise.all([
    Promise.all(
      Array.from({ length: options.producers ?? 0 }, (_, i) => fleet.spawnProducer(`p${i + 1}`)),
    ),
    ...Array.from({ length: options.workers ?? 1 }, (_, i) =>
      fleet.spawnWorker(`w${i + 1}`, workerEnv),
    ),
  ]);
  return Object.assign(fleet, {
    workerEnv,
    producers,
    ledgerRows: async () => {
      const exists = await sql<{
        t: string | null;
      }>`select to_regclass('ops_tool_ledger')::text as t`.execute(fleet.store.db);
      if (!exists.rows[0]?.t) return [];
      const { rows } = await sql<{
        tool: string;
        idempotency_key: string;
        args: { service: string };
      }>`
        select tool, idempotency_key, args from ops_tool_ledger order by at, idempotency_key`.execute(
        fleet.store.db,
      );
      return rows;
    },
  });
}

/** Waits until the run is PAUSED with `count` pending actions in its tree, and returns them. */
export async function pausedWith(
  fleet: Fleet,
  runId: string,
  count: number,
): Promise<PendingActionRecord[]> {
  let actions: PendingActionRecord[] = [];
  await waitFor(
    async () => {
      const run = await fleet.store.getRun(runId);
      if (run?.status !== 'PAUSED') return false;
      actions = await fleet.client.listPendingActions(runId);
      return actions.length === count;
    },
    30_000,
    `run ${runId} PAUSED with ${count} pending actions`,
  );
  return actions;
}

/** Waits for a final status (COMPLETED, ERROR, CANCELLED). */
export async function finished(fleet: Fleet, runId: string): Promise<RunRecord> {
  let run: RunRecord | undefined;
  await waitFor(
    async () => {
      run = await fleet.store.getRun(runId);
      return isStatusIn(run?.status, FINAL_STATUSES);
    },
    40_000,
    `run ${runId} to finish`,
  );
  return run!;
}

/** Tool calls of the history that have no tool message: a model API would refuse such a history. */
export function callsWithoutResult(view: RunView): string[] {
  const answered = new Set(view.messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
  const missing = view.messages
    .flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : []))
    .filter((id) => !answered.has(id));
  return [...missing, ...view.member_runs.flatMap(callsWithoutResult)];
}

/** The tool message content the model got for each call of `tool`, across the tree. */
export function toolMessages(view: RunView, tool: string): string[] {
  return [
    ...view.messages.flatMap((m) => (m.role === 'tool' && m.name === tool ? [m.content] : [])),
    ...view.member_runs.flatMap((member) => toolMessages(member, tool)),
  ];
}

/**
 * The ledger rows written from now on: a test of a file that shares one fleet, its tests running
 * in turn, calls it as it begins and reads the returned function's rows (whatever their keys).
 */
export async function ledgerFromNow(fleet: OpsFleet): Promise<OpsFleet['ledgerRows']> {
  const before = (await fleet.ledgerRows()).length;
  return async () => (await fleet.ledgerRows()).slice(before);
}
