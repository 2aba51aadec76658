import { BadRequest, createClient, RunNotFound, Unprocessable } from '@cairn/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  FLEET_BACKEND,
  holderOf,
  RESEARCHER,
  startFleet,
  waitFor,
  type Fleet,
  type SpawnedProducer,
} from '../fleet/fleet.js';

// Forks over HTTP (docs/forks-and-replay.md "Forks: time travel at a checkpoint"): `runs.fork` of @cairn/client against a
// producer and worker processes, and a fork whose worker is SIGKILLed mid-run. The tests share
// the database, queue and producer; each starts its own workers, stopped after it.

const KEYS = 'acme:acme-key,globex:globex-key';
const INPUT = "Research 'cairns'";
/** Workers start, and a run is recovered after a SIGKILL: a loaded machine takes its time. */
const TEST_TIMEOUT_MS = 120_000;

let fleet: Fleet;
let producer: SpawnedProducer;
beforeAll(async () => {
  fleet = await startFleet({ backend: FLEET_BACKEND, toolDelayMs: 20 });
  producer = await fleet.spawnProducer('p', { env: { CAIRN_API_KEYS: KEYS } });
});
afterEach(() => fleet?.stopWorkers());
afterAll(() => fleet?.stop());

/** How many tool executions the fleet's ledger holds. */
function executions(): number {
  return [...fleet.ledger().values()].reduce((a, b) => a + b, 0);
}

describe(`runs.fork against a producer and workers (${FLEET_BACKEND})`, () => {
  it(
    "forks at a checkpoint with an input, honours its Idempotency-Key, and refuses points, bodies and other tenants' runs",
    async () => {
      const executedBefore = executions();
      await fleet.spawnWorker('a');
      const acme = createClient({ baseUrl: producer.baseUrl, apiKey: 'acme-key' });
      const globex = createClient({ baseUrl: producer.baseUrl, apiKey: 'globex-key' });

      const created = await acme.runs.create({
        ...RESEARCHER,
        input: INPUT,
        checkpoint: 'tool-batch',
      });
      const source = await acme.runs.wait(created.run_id, { timeoutMs: 60_000 });
      expect(source.status).toBe('COMPLETED');
      expect(source.checkpoints.map((c) => c.seq)).toEqual([1, 2, 3, 4, 5]);
      const second = source.checkpoints[1]!;

      // After the search and the first fetch, asking for one more thing.
      const fork = await acme.runs.fork(
        source.run_id,
        { at: { checkpoint: 2 }, input: 'Fetch only what is left.', metadata: { why: 'retry' } },
        { idempotencyKey: 'fork-1' },
      );
      expect(fork).toMatchObject({
        status: 'PENDING',
        session_id: source.session_id,
        forked_from: { run_id: source.run_id, checkpoint: 2, message_index: second.message_index },
      });
      // The same request again answers with the same fork, and forks nothing more.
      const again = await acme.runs.fork(
        source.run_id,
        { at: { checkpoint: 2 }, input: 'Fetch only what is left.', metadata: { why: 'retry' } },
        { idempotencyKey: 'fork-1' },
      );
      expect(again.run_id).toBe(fork.run_id);
      expect(again.forked_from).toEqual(fork.forked_from);

      const done = await acme.runs.wait(fork.run_id, { timeoutMs: 60_000 });
      expect(done.status).toBe('COMPLETED');
      expect(done.metadata).toEqual({ why: 'retry' });
      expect(done.forked_from).toEqual(fork.forked_from);
      expect(done.messages.slice(0, second.message_index)).toEqual(
        source.messages.slice(0, second.message_index),
      );
      expect(done.messages[second.message_index]).toEqual({
        role: 'user',
        content: 'Fetch only what is left.',
      });
      // Only the two fetches after the point ran for the fork.
      expect(done.tools.map((c) => c.name)).toEqual(['slow_fetch_detail', 'slow_fetch_detail']);
      const ledger = fleet.ledger();
      for (const call of [...source.tools, ...done.tools])
        expect(ledger.get(call.idempotency_key)).toBe(1);
      expect(executions() - executedBefore).toBe(6);
      expect((await acme.runs.get(source.run_id)).forks).toEqual([fork.run_id]);

      for (const [at, message] of [
        [{ checkpoint: 9 }, /has checkpoints 1 to 5, not 9/],
        [{ message_index: 4 }, /no checkpoint .* ends at message 4/],
      ] as const) {
        const refused = acme.runs.fork(source.run_id, { at, input: 'x' });
        await expect(refused).rejects.toBeInstanceOf(Unprocessable);
        await expect(acme.runs.fork(source.run_id, { at, input: 'x' })).rejects.toThrow(message);
      }
      for (const body of [{ at: { checkpoint: 0 } }, { at: { seq: 2 } }]) {
        const refused = await acme.runs.fork(source.run_id, body as never).catch((e: unknown) => e);
        expect(refused, JSON.stringify(body)).toBeInstanceOf(BadRequest);
        expect((refused as BadRequest).issues.map((i) => i.path.split('.')[0])).toContain('at');
      }
      // At the end, where the history is the run's answer, a fork needs an input.
      await expect(acme.runs.fork(source.run_id)).rejects.toThrow(/input is required/);
      // Another tenant does not see the run at all.
      await expect(globex.runs.fork(source.run_id, { input: 'mine now' })).rejects.toBeInstanceOf(
        RunNotFound,
      );
      expect((await acme.runs.get(source.run_id)).forks).toEqual([fork.run_id]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'recovers a fork whose worker is SIGKILLed mid-run like any run: no batch of it runs twice',
    async () => {
      const f = fleet;
      // Slow tools, so the fork is still running when its worker is SIGKILLed; the other recovers it.
      const slow = { RESEARCH_TOOL_DELAY_MS: '1500' };
      await Promise.all(['b', 'c'].map((name) => f.spawnWorker(name, slow)));
      const run = await f.client.enqueueRun({
        entity: RESEARCHER,
        input: INPUT,
        checkpoint: 'tool-batch',
      });
      expect((await f.client.waitForRun(run.runId, { timeoutMs: 90_000 })).status).toBe(
        'COMPLETED',
      );

      // Forked after the search; SIGKILL its worker once the fork has committed a batch of its own.
      const fork = await f.client.forkRun(run.runId, { at: { checkpoint: 1 } });
      let holder: string | undefined;
      await waitFor(
        async () => {
          const view = await f.client.getRun(fork.runId);
          holder = holderOf(view);
          return (view?.tools.length ?? 0) >= 1 && holder !== undefined;
        },
        60_000,
        "the fork's first batch",
      );
      const committed = (await f.client.getRun(fork.runId))!.tools.map((c) => c.idempotency_key);
      const victim = f.workers.find((w) => w.id === holder)!;
      const other = f.workers.find((w) => w.id !== holder)!;
      victim.kill('SIGKILL');
      await victim.exited;

      const done = await f.client.waitForRun(fork.runId, { timeoutMs: 90_000 });
      expect(done.status).toBe('COMPLETED');
      const view = (await f.client.getRun(fork.runId))!;
      expect(view.attempts.map((x) => x.worker_id)).toEqual([victim.id, other.id]);
      expect(view.tools.map((c) => c.name)).toEqual([
        'slow_fetch_detail',
        'slow_fetch_detail',
        'slow_fetch_detail',
      ]);
      // What the fork had committed before the kill never ran again; the call the kill cut short ran
      // at most once more.
      const ledger = f.ledger();
      expect(committed.length).toBeGreaterThanOrEqual(1);
      for (const key of committed) expect(ledger.get(key)).toBe(1);
      for (const call of view.tools)
        expect(ledger.get(call.idempotency_key)).toBeLessThanOrEqual(2);
    },
    TEST_TIMEOUT_MS,
  );
});
