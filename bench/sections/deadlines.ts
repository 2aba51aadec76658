import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ProducerService } from '@cairn/producer';
import { createRegistry } from '@cairn/research-team';
import { FigureSink } from '../lib/attempt.js';
import { medianFigure, valueFigure } from '../lib/figure.js';
import { executionMode, startWorker, type WorkerHandle } from '../lib/fleet.js';
import { waitForTerminal, type QueueTarget } from '../lib/producer.js';
import type { Section, SectionContext } from '../lib/section.js';
import { summarize } from '../lib/stats.js';
import { sleep } from '../lib/timing.js';

const ID = 'deadlines';
/** Each run's deadline: its first tool call (`slow_search`) is in flight then. */
const DEADLINE_MS = 1500;
/** How long `slow_search` would take: far past the deadline, so every run is cut short mid-call. */
const TOOL_MS = 60_000;
/** Runs in flight at once (and the worker's concurrency): no run waits in the queue past its deadline. */
const WAVE = 20;
/** Between two creations of a wave: the deadlines are spread, not all at one instant. */
const STAGGER_MS = 50;

interface Overshoot {
  runId: string;
  status: string;
  error: string | null;
  overshootMs: number;
}

/** Deadline to ERROR commit of each run, on the store's clock (both `deadline_at` and `updated_at` are its `now()`). */
async function overshoots(pool: pg.Pool, runIds: readonly string[]): Promise<Overshoot[]> {
  const { rows } = await pool.query<{
    run_id: string;
    status: string;
    error: string | null;
    overshoot_ms: string;
  }>(
    `SELECT run_id, status, error->>'name' AS error,
            extract(epoch FROM updated_at - deadline_at) * 1000 AS overshoot_ms
       FROM runs WHERE run_id = ANY($1)`,
    [runIds],
  );
  return rows.map((r) => ({
    runId: r.run_id,
    status: r.status,
    error: r.error,
    overshootMs: Number(r.overshoot_ms),
  }));
}

async function measure(
  context: SectionContext,
  sink: FigureSink,
  backend: 'redis' | 'postgres',
  waves: number,
): Promise<void> {
  const database = await context.services.database(ID);
  const redisUrl = backend === 'redis' ? await context.services.redisUrl() : undefined;
  const target: QueueTarget = {
    databaseUrl: database.url,
    backend,
    redisUrl,
    queueName: `bench-deadlines-${Date.now()}`,
  };
  const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-deadlines-'));
  const ledger = join(dir, 'ledger.tsv');
  const client = await ProducerService.connect({
    databaseUrl: target.databaseUrl,
    queue: { backend, redisUrl, queueName: target.queueName },
    registry: createRegistry(),
    migrate: true,
  });
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  let worker: WorkerHandle | undefined;
  const names = [
    `deadline to ERROR commit, tool in flight aborted, ${backend}`,
    `deadline to ERROR commit p95, ${backend}`,
  ];
  try {
    worker = startWorker({
      ...target,
      workerId: `deadlines-${backend}`,
      registry: '@cairn/research-team',
      concurrency: WAVE,
      env: { RESEARCH_TOOL_DELAY_MS: String(TOOL_MS), CAIRN_TOOL_LEDGER: ledger },
    });
    await worker.ready;
    await sink.part(names, async () => {
      context.log(`${backend}: ${waves} waves of ${WAVE} runs, deadline ${DEADLINE_MS} ms`);
      const results: Overshoot[] = [];
      for (let wave = 0; wave < waves; wave++) {
        const runIds: string[] = [];
        for (let i = 0; i < WAVE; i++) {
          const run = await client.enqueueRun({
            entity: { kind: 'agent', name: 'researcher' },
            input: `Research 'deadline ${wave}-${i}'`,
            deadlineMs: DEADLINE_MS,
          });
          runIds.push(run.runId);
          await sleep(STAGGER_MS);
        }
        await waitForTerminal(pool, runIds, 60_000);
        results.push(...(await overshoots(pool, runIds)));
      }
      const wrong = results.filter(
        (r) => r.status !== 'ERROR' || r.error !== 'DeadlineExceededError',
      );
      if (wrong.length > 0)
        throw new Error(
          `${wrong.length} runs did not end in DeadlineExceededError: ${JSON.stringify(wrong[0])}`,
        );
      // The research tools write their ledger line only once they finish: none may have.
      const finished = existsSync(ledger) ? readFileSync(ledger, 'utf8').trim() : '';
      if (finished !== '') throw new Error(`a tool ran to its end past the deadline: ${finished}`);
      const samples = results.map((r) => r.overshootMs);
      const stats = summarize(samples);
      sink.figures.push(
        medianFigure(ID, names[0]!, samples, 'ms', {
          note: 'deadline_at to the ERROR commit (runs.updated_at), both on the store clock',
        }),
        valueFigure(ID, names[1]!, stats.p95, 'ms', stats.n, `max ${stats.max.toFixed(0)}`, {
          goal: { op: '<=', bound: 1000 },
          stats,
        }),
      );
      sink.notes.push(
        `${stats.n} research-team agent runs (${WAVE} in flight on one worker, WORKER_CONCURRENCY=${WAVE}, created ${STAGGER_MS} ms apart), each with deadline_ms ${DEADLINE_MS}; ` +
          `every run's slow_search (${TOOL_MS / 1000} s, honouring ctx.signal) was in flight at its deadline, none finished; ${executionMode()}. ` +
          'The overshoot is the timer firing, the abort reaching the tool, the batch unwinding and the one fenced ERROR write. ' +
          'A run whose worker is dead ends at its next pickup (stalled-job recovery) or, when no worker takes its job, by the reconciler within CAIRN_RECONCILE_AFTER_MS + CAIRN_RECONCILE_INTERVAL_MS of its deadline (not measured here).',
      );
    });
  } finally {
    await worker?.stop();
    await client.close();
    await pool.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Deadlines (#20): how late past its deadline a run whose tool is in flight ends in ERROR. */
export const deadlinesSection: Section = {
  id: ID,
  title: 'Deadlines',
  cairn: true,
  async run(context) {
    const sink = new FigureSink(ID, context.log);
    const backend = (await context.services.redisUrl()) !== undefined ? 'redis' : 'postgres';
    await measure(context, sink, backend, context.quick ? 1 : 5);
    return { figures: sink.figures, notes: sink.notes, failed: sink.failed };
  },
};
