import type pg from 'pg';
import { ProducerService } from '@cairn/producer';
import { IDLE_STATUSES, type BudgetOption, type RunRecord } from '@cairn/engine';
import { BENCH_AGENT, createRegistry } from './bench-registry.js';
import { runConcurrently } from './peer-harness.js';
import { pollUntil } from './timing.js';
import { RUN_INPUT } from './workload.js';

/** Where the benchmark's runs go. */
export interface QueueTarget {
  databaseUrl: string;
  backend: 'redis' | 'postgres';
  redisUrl?: string;
  queueName: string;
}

/** A ProducerService on `target` (migrating the store), validating against the benchmark registry. */
export function openClient(target: QueueTarget): Promise<ProducerService> {
  return ProducerService.connect({
    databaseUrl: target.databaseUrl,
    queue: { backend: target.backend, redisUrl: target.redisUrl, queueName: target.queueName },
    registry: createRegistry(),
    migrate: true,
  });
}

/** Concurrent enqueue requests, as an HTTP producer serving several clients would make. */
export const PRODUCER_LANES = 4;

/** Enqueues `count` runs of `agent` over {@link PRODUCER_LANES} concurrent lanes and returns their records. */
export async function enqueueRuns(
  client: ProducerService,
  count: number,
  agent = BENCH_AGENT,
  budget?: BudgetOption,
): Promise<RunRecord[]> {
  const runs: RunRecord[] = [];
  await runConcurrently(count, PRODUCER_LANES, async () => {
    runs.push(
      await client.enqueueRun({
        entity: { kind: 'agent', name: agent },
        input: RUN_INPUT,
        ...(budget && { budget }),
      }),
    );
  });
  return runs;
}

/** Resolves once every run in `runIds` has a terminal status; throws after `timeoutMs`. */
export async function waitForTerminal(
  pool: pg.Pool,
  runIds: readonly string[],
  timeoutMs: number,
): Promise<void> {
  await pollUntil(
    `${runIds.length} runs to finish`,
    async () => {
      const { rows } = await pool.query<{ n: string }>(
        'SELECT count(*) AS n FROM runs WHERE run_id = ANY($1) AND status = ANY($2)',
        [runIds, IDLE_STATUSES],
      );
      return Number(rows[0]?.n) >= runIds.length ? true : undefined;
    },
    { timeoutMs, everyMs: 25 },
  );
}

/** How many of `runIds` ended COMPLETED. */
export async function completedCount(pool: pg.Pool, runIds: readonly string[]): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM runs WHERE run_id = ANY($1) AND status = 'COMPLETED'",
    [runIds],
  );
  return Number(rows[0]?.n);
}
