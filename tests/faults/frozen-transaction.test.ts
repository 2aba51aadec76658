import { setTimeout as delay } from 'node:timers/promises';
import { createDb } from '@cairn/store';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

let t: TestStore;
let holder: ReturnType<typeof createDb> | undefined;
let release: () => void = () => undefined;
beforeEach(async () => {
  t = await openTestStore();
});
afterEach(async () => {
  release();
  await holder?.destroy();
  holder = undefined;
  await t.close();
});

/** Opens a transaction that locks the run's row, then goes silent, as a worker SIGSTOPped mid-commit does. */
async function freezeHoldingTheRow(
  runId: string,
  idleInTransactionTimeoutMs: number,
): Promise<void> {
  holder = createDb(t.database.url, { idleInTransactionTimeoutMs });
  const gate = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const lockTaken = new Promise<void>((resolve) => (locked = resolve));
  void holder
    .transaction()
    .execute(async (trx) => {
      await sql`update runs set updated_at = now() where run_id = ${runId}`.execute(trx);
      locked();
      await gate;
    })
    .catch(() => undefined);
  await lockTaken;
}

describe('a worker frozen in the middle of a transaction', () => {
  it('no longer blocks the takeover of its run: Postgres ends its idle transaction and the claim goes through', async () => {
    const run = await t.store.createRun({
      entity: { kind: 'agent', name: 'researcher' },
      input: 'x',
      checkpoint: 'tool-batch',
    });
    await freezeHoldingTheRow(run.runId, 1_000);
    const started = Date.now();
    const claim = await t.store.claimRun(run.runId, { workerId: 'taker', reason: 'recovered' });
    expect(claim.epoch).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('would block it for as long as the worker stays frozen without that timeout', async () => {
    const run = await t.store.createRun({
      entity: { kind: 'agent', name: 'researcher' },
      input: 'x',
      checkpoint: 'tool-batch',
    });
    await freezeHoldingTheRow(run.runId, 0);
    const claim = t.store.claimRun(run.runId, { workerId: 'taker', reason: 'recovered' });
    // A fixed window: the claim is that it does NOT go through while the worker stays frozen.
    expect(
      await Promise.race([claim.then(() => 'claimed'), delay(2_000).then(() => 'blocked')]),
    ).toBe('blocked');
    release();
    expect((await claim).epoch).toBe(1);
  });

  it('is ended after 10 s by default', async () => {
    const db = createDb(t.database.url);
    try {
      const { rows } = await sql<{
        value: string;
      }>`select current_setting('idle_in_transaction_session_timeout') as value`.execute(db);
      expect(rows).toEqual([{ value: '10s' }]);
    } finally {
      await db.destroy();
    }
  });
});
