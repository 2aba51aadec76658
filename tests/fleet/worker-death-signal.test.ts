import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { hasTestRedis, TEST_DATABASE_URL_VAR, testDatabase } from '@cairn/services';
import {
  allTools,
  holderOf,
  QUEUE_BACKENDS,
  RESEARCHER,
  startFleet,
  waitFor,
  type Fleet,
  type SpawnedWorker,
} from './fleet.js';

/**
 * Far longer than the run's recovery may take: a takeover before it comes from
 * the death signal (on by default), not from the lock. (A live worker whose execution thread
 * blocks keeps its run: tests/fleet/event-loop-block.test.ts, with the signal on.)
 */
const LOCK_MS = 30_000;

const backends = QUEUE_BACKENDS.filter((backend) => backend !== 'redis' || hasTestRedis());

/** Enqueues a run and waits for its first checkpoint; returns the run id and the worker holding it. */
async function runAtFirstCheckpoint(
  fleet: Fleet,
): Promise<{ runId: string; victim: SpawnedWorker }> {
  const { runId } = await fleet.client.enqueueRun({
    entity: RESEARCHER,
    input: "Research 'cairns'",
    checkpoint: 'tool-batch',
  });
  let holder: string | undefined;
  await waitFor(
    async () => {
      const view = await fleet.client.getRun(runId);
      holder = holderOf(view);
      return holder !== undefined && (view?.last_checkpoint_at_message_index ?? 0) >= 3;
    },
    20_000,
    'the first checkpoint',
  );
  return { runId, victim: fleet.workers.find((w) => w.id === holder)! };
}

/** SIGKILLs the run's holder; the other worker must resume it long before its lock expires. */
async function killAndExpectFastRecovery(
  fleet: Fleet,
  runId: string,
  victim: SpawnedWorker,
): Promise<void> {
  const killedAt = Date.now();
  victim.kill('SIGKILL');
  await victim.exited;

  const done = await fleet.client.waitForRun(runId, { timeoutMs: 25_000 });
  expect(done.status).toBe('COMPLETED');
  const view = (await fleet.client.getRun(runId))!;
  const recovered = view.attempts.find((a) => a.reason === 'recovered')!;
  expect(recovered.worker_id).not.toBe(victim.id);
  // Resumed long before the victim's lock could have expired.
  expect(new Date(recovered.started_at).getTime() - killedAt).toBeLessThan(LOCK_MS / 2);
  const finder = fleet.workers.find((w) => w !== victim)!;
  await finder.waitForLog("a worker's connection closed");
  expect(allTools(view).filter((t) => t.name === 'slow_search')).toHaveLength(1);
}

describe.each(backends)("a dead worker's run resumes before its lock expires (%s)", (backend) => {
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.stop();
    fleet = undefined;
  });

  it('SIGKILL: the survivor sees the connection close, releases the lock and resumes the run, same run id', async () => {
    fleet = await startFleet({ backend, lockMs: LOCK_MS });
    await fleet.spawnWorker('a');
    await fleet.spawnWorker('b');
    const { runId, victim } = await runAtFirstCheckpoint(fleet);
    await killAndExpectFastRecovery(fleet, runId, victim);
  });
});

describe("the death signal on PostgreSQL counts the queue's own database and role only", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** Opens a connection to `url` as `user` (default: the URL's), named `name`. */
  const connect = async (url: string, name: string, user?: string) => {
    const target = new URL(url);
    if (user) [target.username, target.password] = [user, ''];
    const client = new pg.Client({ connectionString: target.toString(), application_name: name });
    client.on('error', () => undefined);
    await client.connect();
    cleanups.push(() => client.end().catch(() => undefined));
    return client;
  };

  it("another role's or database's connection named after the dead worker, and another role holding the watcher's old advisory lock, do not keep its run", async () => {
    const adminUrl = process.env[TEST_DATABASE_URL_VAR]!;
    const role = `cairn_foreign_${randomBytes(6).toString('hex')}`;
    const admin = await connect(adminUrl, 'test-admin');
    await admin.query(`create role ${role} login`);
    cleanups.push(() => admin.query(`drop role if exists ${role}`));
    const fleet = await startFleet({ backend: 'postgres', lockMs: LOCK_MS });
    cleanups.push(() => fleet.stop());
    const otherDb = await testDatabase();
    cleanups.push(() => otherDb.drop());

    // An unprivileged role takes the key the watcher's advisory lock used, before any worker can: any role may take any key.
    const foreign = await connect(fleet.db.url, 'foreign', role);
    await foreign.query('select pg_advisory_lock(hashtext($1))', [
      `cairn-liveness:bullmq:${fleet.client.runQueue.name}`,
    ]);
    await fleet.spawnWorker('a');
    await fleet.spawnWorker('b');
    const { runId, victim } = await runAtFirstCheckpoint(fleet);

    // The victim's BullMQ id, from its job's lock token (`<id>:<n>`), names the impostors.
    const queueDb = await connect(fleet.db.url, 'test-admin');
    const { rows } = await queueDb.query<{ id: string }>(
      `select split_part(lock_token, ':', 1) as id from bullmq.job where queue = $1 and state = 'active'`,
      [fleet.client.runQueue.name],
    );
    expect(rows).toHaveLength(1);
    const name = `cairn-live:${rows[0]!.id}`;
    await connect(fleet.db.url, name, role);
    await connect(otherDb.url, name);
    await killAndExpectFastRecovery(fleet, runId, victim);
  });
});
