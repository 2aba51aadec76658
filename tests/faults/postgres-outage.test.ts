import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointWriteError, Engine, type RunRecord } from '@cairn/engine';
import { createRegistry } from '@cairn/research-team';
import { ProducerService } from '@cairn/producer';
import {
  createDatabase,
  requiresRedis,
  spawnApp,
  testRedisUrl,
  type AppProcess,
} from '@cairn/services';
import { createDb, type RunView } from '@cairn/store';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  startRestartablePostgres,
  type RestartablePostgres,
} from '../../chaos/restartable-postgres.js';
import { openTestStore, type TestStore } from '../helpers/test-store.js';
import { waitFor } from '../helpers/wait-for.js';
import { createApp } from '../../apps/producer/src/app.js';

/** Reads until `done` holds (the suite's one wait), a read that fails while Postgres is down counting as not yet. */
async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  what: string,
): Promise<T> {
  let last: T | undefined;
  await waitFor(
    async () => {
      last = await read().catch(() => undefined);
      return last !== undefined && done(last);
    },
    timeoutMs,
    what,
  );
  return last!;
}

/** Messages and tool calls agree with the checkpoint index: nothing half-written. */
function expectWhole(view: RunView): void {
  expect(view.messages).toHaveLength(view.last_checkpoint_at_message_index);
  const results = view.messages
    .filter((m) => (m as { role: string }).role === 'tool')
    .map((m) => (m as { toolCallId: string }).toolCallId);
  expect(view.tools.map((t) => t.tool_call_id).sort()).toEqual([...results].sort());
}

describe('Postgres restarting under a worker', () => {
  let postgres: RestartablePostgres;
  beforeAll(async () => {
    postgres = await startRestartablePostgres();
  });
  afterAll(async () => {
    await postgres?.stop();
  });

  it('fails a transaction whose connection the server killed, without crashing the process; the pool reconnects', async () => {
    const db = createDb(postgres.url);
    try {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let opened!: () => void;
      const open = new Promise<void>((resolve) => (opened = resolve));
      const holding = db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        opened();
        await gate;
        await sql`select 2`.execute(trx);
      });
      holding.catch(() => undefined);
      await open;
      await postgres.stopServer();
      release();
      await expect(holding).rejects.toThrow();
      await postgres.startServer();
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await db.destroy();
    }
  });

  it('the API answers 503 (Retry-After) while Postgres is down, never a bare 500, and serves again once it is back', async () => {
    const client = await ProducerService.connect({
      databaseUrl: postgres.url,
      queue: { backend: 'postgres', queueName: `outage-${randomUUID()}` },
      registry: createRegistry(),
      migrate: true,
    });
    const app = createApp({ client, queues: [client.runQueue.queue] });
    const create = () =>
      app.request('/v1/teams/research-team/runs', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ input: 'hi' }),
      });
    try {
      await postgres.stopServer();
      for (const answer of [await app.request(`/v1/runs/${randomUUID()}`), await create()]) {
        expect(answer.status).toBe(503);
        expect(answer.headers.get('Retry-After')).toBe('1');
        expect(await answer.json()).toEqual({
          error: 'service_unavailable',
          message: expect.stringContaining('Postgres is unavailable'),
        });
      }
      await postgres.startServer();
      const back = await eventually(
        async () => create(),
        (answer) => answer.status === 202,
        30_000,
        'the API to serve again',
      );
      const { run_id } = (await back.json()) as { run_id: string };
      expect((await app.request(`/v1/runs/${run_id}`)).status).toBe(200);
    } finally {
      await client.close();
    }
  });

  // The queue must outlive the Postgres restart, so this one needs the Redis backend.
  it(
    'hands the run back when a commit cannot reach Postgres; the run completes, nothing half-written, committed work not redone',
    requiresRedis(),
    async () => {
      const database = await createDatabase(
        postgres.url,
        `outage_${randomUUID().replaceAll('-', '')}`,
      );
      const dir = mkdtempSync(join(tmpdir(), 'cairn-outage-'));
      const ledger = join(dir, 'ledger.tsv');
      const queueName = `test-${randomUUID()}`;
      const client = await ProducerService.connect({
        databaseUrl: database.url,
        queue: { redisUrl: testRedisUrl(), queueName },
        registry: createRegistry(),
        migrate: true,
      });
      let worker: AppProcess | undefined;
      try {
        worker = spawnApp('worker', {
          name: 'outage',
          logFile: join(dir, 'worker.log'),
          env: {
            DATABASE_URL: database.url,
            REDIS_URL: testRedisUrl(),
            CAIRN_QUEUE_NAME: queueName,
            CAIRN_WORKER_ID: 'outage',
            CAIRN_MODEL: 'scripted',
            OPENAI_API_KEY: undefined,
            RESEARCH_TOOL_DELAY_MS: '600',
            CAIRN_TOOL_LEDGER: ledger,
            CAIRN_RECONCILE_INTERVAL_MS: '1000',
            CAIRN_RECONCILE_AFTER_MS: '3000',
            LOG_LEVEL: 'info',
          },
        });
        await worker.waitForLog('worker started', 60_000);
        const run = await client.enqueueRun({
          entity: { kind: 'agent', name: 'researcher' },
          input: "Research 'outages'",
          checkpoint: 'tool-batch',
        });
        const first = await eventually(
          () => client.getRun(run.runId),
          (v) => (v?.last_checkpoint_at_message_index ?? 0) >= 3,
          30_000,
          'the first checkpoint',
        );
        const committedBefore = first!.tools.map((t) => t.idempotency_key);

        await postgres.restart(3_000);

        const done = await eventually(
          () => client.getRun(run.runId),
          (v) => v?.status === 'COMPLETED' || v?.status === 'ERROR',
          60_000,
          'the run to finish',
        );
        expect(worker.alive).toBe(true);
        expect(done!.status).toBe('COMPLETED');
        expect(done!.error).toBeNull();
        expectWhole(done!);
        expect(done!.tools.filter((t) => t.status === 'completed')).toHaveLength(4);
        const executions = readFileSync(ledger, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => line.split('\t')[1]);
        for (const key of committedBefore)
          expect(executions.filter((k) => k === key)).toHaveLength(1);
      } finally {
        if (worker?.alive) {
          worker.kill('SIGKILL');
          await worker.exited;
        }
        await client.close();
        await database.drop();
        if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe('a commit that fails once (connection lost mid-commit)', () => {
  let t: TestStore;
  beforeAll(() => {
    process.env.RESEARCH_TOOL_DELAY_MS = '0';
    process.env.RESEARCH_MODEL_LATENCY_MS = '0';
  });
  afterEach(async () => {
    await t.close();
  });

  /** Makes the first write of a tool result fail as a dropped connection would; later writes succeed. */
  async function failFirstToolResultWrite(): Promise<void> {
    t = await openTestStore();
    await sql`create sequence fail_once`.execute(t.db);
    await sql`
      create function fail_first_tool_result() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from json_array_elements(new.messages) m where m->>'role' = 'tool')
           and nextval('fail_once') = 1 then
          raise exception 'simulated connection loss' using errcode = 'admin_shutdown';
        end if;
        return new;
      end $$`.execute(t.db);
    await sql`create trigger fail_once before insert on run_commits for each row execute function fail_first_tool_result()`.execute(
      t.db,
    );
  }

  function engine(): Engine {
    return new Engine({ store: t.store, registry: createRegistry(), workerId: 'w' });
  }

  async function finish(e: Engine, runId: string): Promise<RunRecord> {
    const result = await e.execute(runId, { reason: 'recovered' });
    if (result.outcome !== 'finished') throw new Error('expected a finished run');
    return result.run;
  }

  it('an agent run stops without writing ERROR, and the next execution resumes it from its last checkpoint', async () => {
    await failFirstToolResultWrite();
    const e = engine();
    const run = await e.createRun({
      entity: { kind: 'agent', name: 'researcher' },
      input: "Research 'x'",
      checkpoint: 'tool-batch',
    });
    const failure = await e.execute(run.runId, { reason: 'run' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CheckpointWriteError);
    expect((failure as Error).message).toContain('simulated connection loss');
    expect(await t.store.getRun(run.runId)).toMatchObject({
      status: 'RUNNING',
      lastCheckpointAtMessageIndex: 0,
      error: null,
    });

    const done = await finish(e, run.runId);
    expect(done.status).toBe('COMPLETED');
    expectWhole((await t.store.getRunView(run.runId))!);
  });

  it("a member run's failed commit stops the team too, instead of reaching the team's model as a tool error", async () => {
    await failFirstToolResultWrite();
    const e = engine();
    const run = await e.createRun({
      entity: { kind: 'team', name: 'research-team' },
      input: "Research 'y'",
      checkpoint: 'tool-batch',
    });
    await expect(e.execute(run.runId, { reason: 'run' })).rejects.toBeInstanceOf(
      CheckpointWriteError,
    );
    const stalled = (await t.store.getRunView(run.runId))!;
    // Only the delegation turn (committed before delegating) is stored; its result is not.
    expect(stalled).toMatchObject({ status: 'RUNNING', last_checkpoint_at_message_index: 2 });
    expect(stalled.tools.map((t) => t.status)).toEqual(['running']);
    expect(stalled.member_runs.map((m) => m.status)).toEqual(['RUNNING']);

    const done = await finish(e, run.runId);
    expect(done.status).toBe('COMPLETED');
    expect(done.content).not.toMatch(/simulated|failed|ERROR/);
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.member_runs).toHaveLength(1);
    expect(view.member_runs[0]!.status).toBe('COMPLETED');
    expectWhole(view);
    expectWhole(view.member_runs[0]!);
  });
});
