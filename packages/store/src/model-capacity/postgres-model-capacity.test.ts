import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Permit, PermitAnswer, PermitRequest } from '@cairn/engine';
import { createDb } from '../create-db.js';
import * as migration from '../migrations/0009_b_model_capacity.js';
import * as ceiling from '../migrations/0024_adaptive_ceiling.js';
import * as line from '../migrations/0028_capacity_line.js';
import * as paced from '../migrations/0030_paced_grants.js';
import * as probe from '../migrations/0031_capacity_probe.js';
import { useStoreTestContext } from '../test-support/store-test-context.js';
import { PostgresModelCapacity } from './postgres-model-capacity.js';

const ctx = useStoreTestContext();

const MODEL = 'openai-chat:gpt-x';

function request(overrides: Partial<PermitRequest> = {}): PermitRequest {
  return {
    model: MODEL,
    limit: undefined,
    waiterId: 'run-1',
    tenant: '',
    weight: 1,
    priority: 5,
    waitedMs: 0,
    tokens: 100,
    ...overrides,
  };
}

function permitOf(answer: PermitAnswer): Permit {
  expect(answer).toMatchObject({ granted: true });
  return (answer as Extract<PermitAnswer, { granted: true }>).permit;
}

/** Rows of the limiter's tables, for what stays stored. */
async function rowCounts(): Promise<Record<string, number>> {
  const { rows } = await sql<Record<string, number>>`
    select
      (select count(*) from cairn_capacity_slots) as slots,
      (select count(*) from cairn_capacity_grants) as grants,
      (select count(*) from cairn_capacity_waiters) as waiters`.execute(ctx.db);
  return rows[0]!;
}

describe('PostgresModelCapacity', () => {
  it('keeps its state in unlogged tables, one function per operation', async () => {
    const { rows } = await sql<{ name: string; persistence: string }>`
      select relname as name, relpersistence as persistence from pg_class
      where relname like 'cairn_capacity_%' and relkind = 'r' order by 1`.execute(ctx.db);
    expect(rows).toEqual(
      ['grants', 'models', 'slots', 'tenants', 'waiters'].map((t) => ({
        name: `cairn_capacity_${t}`,
        persistence: 'u',
      })),
    );
  });

  it('its migration goes down without a trace, and up again', async () => {
    const objects = async () => {
      const { rows } = await sql<{ name: string }>`
        select relname as name from pg_class where relname like 'cairn_capacity_%'
        union all
        select proname from pg_proc where proname like 'cairn_capacity_%'`.execute(ctx.db);
      return rows.length;
    };
    const created = await objects();
    // Migrations take a database of no particular schema.
    const db = ctx.db as unknown as Kysely<unknown>;
    // The later migrations' functions go first.
    await probe.down(db);
    await paced.down(db);
    await line.down(db);
    await migration.down(db);
    expect(await objects()).toBe(0);
    await migration.up(db);
    await line.up(db);
    await paced.up(db);
    await probe.up(db);
    expect(await objects()).toBe(created);
    const capacity = new PostgresModelCapacity(ctx.db);
    permitOf(await capacity.tryAcquire(request({ limit: { concurrency: 1 } })));
    // A requests limit goes through the restated functions: two at once, the third refused.
    const limit = { requestsPerMinute: 2 };
    permitOf(await capacity.tryAcquire(request({ limit, waiterId: 'paced-1' })));
    permitOf(await capacity.tryAcquire(request({ limit, waiterId: 'paced-2' })));
    expect(await capacity.tryAcquire(request({ limit, waiterId: 'paced-3' }))).toMatchObject({
      granted: false,
    });
  });

  it('the remembered ceiling goes down to the functions before it (a cap grows back to the configured one), and up again', async () => {
    const db = ctx.db as unknown as Kysely<unknown>;
    const limit = { concurrency: 2 };
    /** The cap after a 429 at 2 and then four successes, one at a time. */
    const capAfter429 = async (capacity: PostgresModelCapacity): Promise<number | undefined> => {
      const held = permitOf(await capacity.tryAcquire(request({ limit })));
      await capacity.rateLimited(held, { retryAfterMs: 1 }, limit);
      // The 429's pause (1 ms) over, as the limiter reports it.
      await expect.poll(async () => (await capacity.snapshot())[0]!.pausedForMs).toBe(0);
      for (let i = 0; i < 4; i++) {
        const permit = permitOf(await capacity.tryAcquire(request({ limit, waiterId: `r${i}` })));
        await capacity.release(permit, { ok: true });
      }
      return (await capacity.snapshot())[0]!.concurrencyLimit;
    };
    await ceiling.down(db);
    expect(await capAfter429(new PostgresModelCapacity(ctx.db))).toBe(2);
    await ceiling.up(db);
    const capacity = new PostgresModelCapacity(ctx.db);
    expect(await capAfter429(capacity)).toBe(1);
  });

  it('the line goes down to the grant before it (a waiter held in line keeps free room from those asking), and up again', async () => {
    const db = ctx.db as unknown as Kysely<unknown>;
    const limit = { concurrency: 1 };
    /** Whether a waiter that asks gets the free slot while another is held in line ahead of it. */
    const askingGranted = async (model: string): Promise<boolean> => {
      const capacity = new PostgresModelCapacity(ctx.db);
      const holder = permitOf(await capacity.tryAcquire(request({ model, limit })));
      await capacity.tryAcquire(request({ model, limit, waiterId: 'parked', priority: 1 }));
      await capacity.hold(model, 'parked', 60_000);
      await capacity.release(holder, { ok: true });
      return (await capacity.tryAcquire(request({ model, limit, waiterId: 'asking' }))).granted;
    };
    await line.down(db);
    expect(await askingGranted('before')).toBe(false);
    await line.up(db);
    expect(await askingGranted('after')).toBe(true);
  });

  it('grants up to the concurrency cap, refuses the next, and grants it after a release', async () => {
    const capacity = new PostgresModelCapacity(ctx.db);
    const limit = { concurrency: 2 };
    const first = permitOf(await capacity.tryAcquire(request({ limit, waiterId: 'a' })));
    permitOf(await capacity.tryAcquire(request({ limit, waiterId: 'b' })));
    expect(first).toMatchObject({ model: MODEL, tokens: 100, holdsSlot: true });
    const refused = await capacity.tryAcquire(request({ limit, waiterId: 'c' }));
    expect(refused).toMatchObject({ granted: false, reason: 'concurrency' });
    expect(await capacity.snapshot()).toEqual([
      { model: MODEL, waiting: 1, inFlight: 2, concurrencyLimit: 2, pausedForMs: 0 },
    ]);

    await capacity.release(first, { ok: true });
    permitOf(await capacity.tryAcquire(request({ limit, waiterId: 'c' })));
    expect(await capacity.snapshot()).toEqual([
      { model: MODEL, waiting: 0, inFlight: 2, concurrencyLimit: 2, pausedForMs: 0 },
    ]);
  });

  it('never grants more than the cap to callers racing on several connections', async () => {
    const capacity = new PostgresModelCapacity(ctx.db);
    const limit = { concurrency: 3 };
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        capacity.tryAcquire(request({ limit, waiterId: `run-${i}`, tenant: `t${i % 3}` })),
      ),
    );
    expect(answers.filter((a) => a.granted)).toHaveLength(3);
    for (const answer of answers.filter((a) => !a.granted)) {
      expect(answer).toMatchObject({ reason: 'concurrency' });
    }
    expect((await capacity.snapshot())[0]).toMatchObject({ inFlight: 3, waiting: 9 });
  });

  it("an unlimited model's permit needs no lock: it is granted while another session holds the model's row", async () => {
    const capacity = new PostgresModelCapacity(ctx.db);
    permitOf(await capacity.tryAcquire(request()));
    const other = createDb(ctx.url, { max: 1 });
    try {
      await other.transaction().execute(async (trx) => {
        await sql`select 1 from cairn_capacity_models where model = ${MODEL} for update`.execute(
          trx,
        );
        const permit = permitOf(await capacity.tryAcquire(request({ waiterId: 'run-2' })));
        expect(permit.holdsSlot).toBe(false);
      });
    } finally {
      await other.destroy();
    }
    expect(await capacity.snapshot()).toEqual([
      { model: MODEL, waiting: 0, inFlight: 0, pausedForMs: 0 },
    ]);
  });

  it('takes waiters in fair order: round robin across tenants, by priority and age within one', async () => {
    const capacity = new PostgresModelCapacity(ctx.db, { waiterTtlMs: 10_000 });
    const limit = { concurrency: 1 };
    const holder = permitOf(await capacity.tryAcquire(request({ limit, waiterId: 'holder' })));
    const waiters: Array<Partial<PermitRequest>> = [
      { waiterId: 'a-late', tenant: 'a' },
      { waiterId: 'a-urgent', tenant: 'a', priority: 1 },
      { waiterId: 'a-old', tenant: 'a', waitedMs: 30_000 },
      { waiterId: 'b-1', tenant: 'b' },
    ];
    for (const waiter of waiters) {
      expect(await capacity.tryAcquire(request({ ...waiter, limit }))).toMatchObject({
        granted: false,
        reason: 'concurrency',
      });
    }
    await capacity.release(holder, { ok: true });

    const order: string[] = [];
    let pending = [...waiters];
    while (pending.length > 0) {
      const answers = [];
      for (const waiter of pending) {
        answers.push({ waiter, answer: await capacity.tryAcquire(request({ ...waiter, limit })) });
      }
      const granted = answers.filter((a) => a.answer.granted);
      expect(granted).toHaveLength(1);
      const [{ waiter, answer }] = granted as [(typeof answers)[number]];
      order.push(waiter.waiterId!);
      pending = pending.filter((w) => w !== waiter);
      await capacity.release(permitOf(answer), { ok: true });
    }
    expect(order).toEqual(['a-urgent', 'b-1', 'a-old', 'a-late']);
  });

  it('a 429 pauses the model and halves its cap, which successes raise back to one below the cap that drew it', async () => {
    const capacity = new PostgresModelCapacity(ctx.db);
    const limit = { concurrency: 4 };
    const permit = permitOf(await capacity.tryAcquire(request({ limit })));
    const pausedForMs = await capacity.rateLimited(permit, { retryAfterMs: 300 }, limit);
    expect(pausedForMs).toBe(300);
    expect(await capacity.tryAcquire(request({ limit }))).toMatchObject({
      granted: false,
      reason: 'paused',
    });
    expect((await capacity.snapshot())[0]).toMatchObject({ concurrencyLimit: 2, inFlight: 0 });
    // A fixed time: the pause is a timer under test and must be over.
    await sleep(pausedForMs + 50);

    // 2 -> 2.5 -> 2.9 -> 3: while the 429 at 4 is remembered, no higher.
    const limits: number[] = [];
    for (let i = 0; i < 6; i++) {
      const held = permitOf(await capacity.tryAcquire(request({ limit, waiterId: `run-${i}` })));
      await capacity.release(held, { ok: true, usedTokens: 10 });
      limits.push((await capacity.snapshot())[0]!.concurrencyLimit!);
    }
    expect(limits).toEqual([2, 2, 3, 3, 3, 3]);
  });

  it('keeps only live state: expired slots, grants out of the window and absent waiters are pruned by the next call', async () => {
    // Long enough that the three asks below fall within them however loaded the machine.
    const capacity = new PostgresModelCapacity(ctx.db, {
      windowMs: 1000,
      waiterTtlMs: 1000,
      leaseMs: 1000,
    });
    const limit = { concurrency: 2, requestsPerMinute: 2 };
    permitOf(await capacity.tryAcquire(request({ limit, waiterId: 'a' })));
    permitOf(await capacity.tryAcquire(request({ limit, waiterId: 'b' })));
    expect(await capacity.tryAcquire(request({ limit, waiterId: 'c' }))).toMatchObject({
      granted: false,
    });
    expect(await rowCounts()).toEqual({ slots: 2, grants: 2, waiters: 1 });

    // A fixed time: the lease, the window with its 250 ms margin and the waiter TTL must all have passed.
    await sleep(1400);
    const permit = permitOf(await capacity.tryAcquire(request({ limit, waiterId: 'd' })));
    expect(await rowCounts()).toEqual({ slots: 1, grants: 1, waiters: 0 });
    await capacity.release(permit, { ok: true });
    expect(await rowCounts()).toEqual({ slots: 0, grants: 1, waiters: 0 });
  });

  it('calls about a model or permit it does not know (after a crash emptied its tables) do nothing', async () => {
    const capacity = new PostgresModelCapacity(ctx.db);
    const permit: Permit = { id: '42', model: MODEL, tokens: 10, holdsSlot: true };
    await capacity.renew(permit);
    await capacity.release(permit, { ok: true, usedTokens: 5 });
    await capacity.leave(MODEL, 'run-1');
    expect(await capacity.snapshot()).toEqual([]);

    permitOf(await capacity.tryAcquire(request({ limit: { concurrency: 1 } })));
    await capacity.release(permit, { ok: true, usedTokens: 5 });
    expect((await capacity.snapshot())[0]).toMatchObject({ inFlight: 1 });
  });
});
