import { randomUUID } from 'node:crypto';
// Fixed waits on purpose, throughout: what these cases check is the limiters' own timers (a permit's
// lease, the rate window, a waiter's TTL, a learned pause, the ceiling's memory), set short in
// TIMINGS; each wait lets the timer under test run out, with a margin, before the next ask.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type {
  CapacityLimit,
  CapacitySnapshot,
  ModelCapacity,
  Permit,
  PermitAnswer,
  PermitRequest,
} from '@cairn/engine';

/** Limiter timings an implementation under test is opened with. */
export interface ConformanceTimings {
  /** The sliding window of requests and tokens per minute (60 000 in production). */
  windowMs: number;
  /** How long a waiter stays in line without asking again. */
  waiterTtlMs: number;
  /** How long a slot stays held without renew or release. */
  leaseMs: number;
  /** How long the cap that drew a 429 is remembered (5 minutes in production). */
  ceilingMemoryMs: number;
}

/** An implementation opened for one test; `close` drops its connection. */
export interface OpenedCapacity {
  capacity: ModelCapacity;
  close(): Promise<void>;
}

/**
 * The margin every implementation adds to its window, so that it is never
 * less conservative than the provider's window counted from the request's
 * receipt (docs/capacity.md and docs/operations.md, "Model capacity": the algorithm both implementations share).
 */
const WINDOW_MARGIN_MS = 250;

/**
 * Short timings, so the suite runs in seconds. The lease is long: only the lease tests, with a
 * lease of their own, let one end. A lease that ended mid-test under load would free a slot the
 * test still counts as held (the climb after a 429 then saw one grant more than the cap).
 */
const TIMINGS: ConformanceTimings = {
  windowMs: 1000,
  waiterTtlMs: 400,
  leaseMs: 60_000,
  ceilingMemoryMs: 60_000,
};

/** Timings for fairness tests: waiters stay present however slow the machine is between asks. */
const PATIENT: ConformanceTimings = { ...TIMINGS, waiterTtlMs: 10_000 };

/** Rounding slack on durations the limiter reports (it may round up to whole ms). */
const SLACK_MS = 5;

/**
 * Registers the behaviour every {@link ModelCapacity} must show (Redis,
 * Postgres): grants and refusals by concurrency, requests and tokens per
 * window, leases, 429 pauses with their adaptive concurrency, fair order
 * across tenants and within one, and the snapshot for metrics.
 *
 * No assertion times the implementation: every duration bound is derived from
 * local clock readings taken around the calls, so a slow machine widens the
 * bounds instead of failing them (limiter and test share the machine's clock).
 *
 * @example
 * describeModelCapacityConformance('Redis', async (timings) => {
 *   const redis = new Redis(testRedisUrl());
 *   return { capacity: new RedisModelCapacity(redis, { prefix: 'p', ...timings }), close: () => redis.quit() };
 * });
 */
export function describeModelCapacityConformance(
  label: string,
  open: (options: ConformanceTimings) => Promise<OpenedCapacity>,
): void {
  describe(`ModelCapacity conformance: ${label}`, () => {
    const opened: OpenedCapacity[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((o) => o.close()));
    });

    /** Opens the implementation with `timings` and a fresh model name for the test. */
    async function setup(timings: ConformanceTimings = TIMINGS) {
      const o = await open(timings);
      opened.push(o);
      const model = `model-${randomUUID()}`;
      const cap = o.capacity;
      const request = (overrides: Partial<PermitRequest> = {}): PermitRequest => ({
        model,
        limit: undefined,
        waiterId: `run-${randomUUID()}`,
        tenant: '',
        weight: 1,
        priority: 5,
        waitedMs: 0,
        tokens: 100,
        ...overrides,
      });
      const ask = (overrides: Partial<PermitRequest> = {}) => cap.tryAcquire(request(overrides));
      /** Asks and expects a permit. */
      const grant = async (overrides: Partial<PermitRequest> = {}): Promise<Permit> => {
        const answer = await ask(overrides);
        expect(
          answer,
          `expected a permit for ${overrides.waiterId ?? 'a new waiter'}`,
        ).toMatchObject({ granted: true });
        return (answer as Extract<PermitAnswer, { granted: true }>).permit;
      };
      /** Asks and expects a refusal for `reason`; returns its retryAfterMs. */
      const refuse = async (
        reason: Extract<PermitAnswer, { granted: false }>['reason'],
        overrides: Partial<PermitRequest> = {},
      ): Promise<number> => {
        const answer = await ask(overrides);
        expect(answer).toMatchObject({ granted: false, reason });
        const retryAfterMs = (answer as Extract<PermitAnswer, { granted: false }>).retryAfterMs;
        expect(retryAfterMs).toBeGreaterThanOrEqual(1);
        return retryAfterMs;
      };
      const snapshotOf = async (name = model): Promise<CapacitySnapshot | undefined> =>
        (await cap.snapshot()).find((s) => s.model === name);
      /**
       * Lets the waiters in `order` ask in turns, each releasing its permit at once, until `count` are
       * granted; returns the granted waiter ids in grant order. Each ask is refused for fairness only.
       */
      const turnOver = async (
        waiters: Array<Partial<PermitRequest> & { waiterId: string }>,
        count: number,
        limit: CapacityLimit,
      ): Promise<string[]> => {
        const pending = [...waiters];
        const granted: string[] = [];
        for (let asks = 0; granted.length < count; asks++) {
          expect(asks, `no grant among ${pending.length} waiters after ${asks} asks`).toBeLessThan(
            20 * waiters.length,
          );
          const waiter = pending[asks % pending.length]!;
          const answer = await ask({ ...waiter, limit });
          if (answer.granted) {
            granted.push(waiter.waiterId);
            pending.splice(pending.indexOf(waiter), 1);
            await cap.release(answer.permit, { ok: true });
          } else expect(answer.reason).toBe('fairness');
        }
        return granted;
      };
      return { cap, model, request, ask, grant, refuse, snapshotOf, turnOver };
    }

    describe('a model with no limit', () => {
      it('is granted at once, as often as asked, taking no slot', async () => {
        const { grant } = await setup();
        const permits = await Promise.all(
          Array.from({ length: 20 }, () => grant({ limit: undefined })),
        );
        for (const permit of permits) expect(permit.holdsSlot).toBe(false);
        expect(new Set(permits.map((p) => p.id)).size).toBe(20);
        const empty = await grant({ limit: {} });
        expect(empty.holdsSlot).toBe(false);
      });
    });

    describe('concurrency', () => {
      it('grants up to the cap, refuses the next, and grants it once a permit is released', async () => {
        const { cap, grant, refuse } = await setup();
        const limit = { concurrency: 2 };
        const first = await grant({ limit });
        const second = await grant({ limit });
        expect(first.holdsSlot).toBe(true);
        expect(second.holdsSlot).toBe(true);
        expect(first.id).not.toBe(second.id);
        const next = await refuse('concurrency', { limit, waiterId: 'next' });
        expect(next).toBeGreaterThanOrEqual(25);
        // A waiter behind it is told to come back no sooner.
        const behind = await refuse('concurrency', { limit, waiterId: 'behind' });
        expect(behind).toBeGreaterThanOrEqual(next);

        await cap.release(first, { ok: true });
        const granted = await grant({ limit, waiterId: 'next' });
        expect(granted.holdsSlot).toBe(true);
        await refuse('concurrency', { limit, waiterId: 'behind' });
      });

      it('a slot whose holder never releases is free again once its lease ends', async () => {
        const leaseMs = 600;
        const { cap, grant, refuse } = await setup({ ...TIMINGS, leaseMs });
        const limit = { concurrency: 1 };
        const lost = await grant({ limit });
        await refuse('concurrency', { limit, waiterId: 'next' });
        await sleep(leaseMs + 100);
        await grant({ limit, waiterId: 'next' });
        // The late release of the expired permit does not free the slot its successor holds.
        await cap.release(lost, { ok: true });
        await refuse('concurrency', { limit, waiterId: 'third' });
      });

      it('renew keeps the slot past its first lease', async () => {
        const leaseMs = 1500;
        const { cap, grant, refuse } = await setup({ ...TIMINGS, leaseMs });
        const limit = { concurrency: 1 };
        const held = await grant({ limit });
        const grantedAt = Date.now();
        while (Date.now() - grantedAt < leaseMs + 300) {
          await sleep(250);
          await cap.renew(held);
        }
        await refuse('concurrency', { limit, waiterId: 'next' });
        await cap.release(held, { ok: true });
        await grant({ limit, waiterId: 'next' });
      });
    });

    describe('requests per minute', () => {
      it('refuses within the sliding window until its oldest grant leaves it, then grants again', async () => {
        const { grant, refuse } = await setup();
        const limit = { requestsPerMinute: 2 };
        const span = TIMINGS.windowMs + WINDOW_MARGIN_MS;
        const firstAsked = Date.now();
        const first = await grant({ limit });
        const firstAnswered = Date.now();
        expect(first.holdsSlot).toBe(false);
        await sleep(300);
        await grant({ limit });
        const refusedAsked = Date.now();
        const retryAfterMs = await refuse('requests', { limit, waiterId: 'third' });
        const refusedAnswered = Date.now();
        // The oldest grant (not the newest) leaves the window first.
        expect(retryAfterMs).toBeLessThanOrEqual(span - (refusedAsked - firstAnswered) + SLACK_MS);
        expect(retryAfterMs).toBeGreaterThanOrEqual(
          span - (refusedAnswered - firstAsked) - SLACK_MS,
        );

        await sleep(retryAfterMs + 50);
        await grant({ limit, waiterId: 'third' });
      });

      it('a later waiter is told to wait for more grants to leave the window', async () => {
        const { grant, refuse } = await setup(PATIENT);
        const limit = { requestsPerMinute: 2 };
        await grant({ limit });
        await sleep(200);
        await grant({ limit });
        const first = await refuse('requests', { limit, waiterId: 'first-in-line' });
        const second = await refuse('requests', { limit, waiterId: 'second-in-line' });
        expect(second).toBeGreaterThan(first);
      });
    });

    describe('tokens per minute', () => {
      it('counts what a request used, not its estimate: an over-estimate frees room, an under-estimate takes more', async () => {
        const { cap, grant, refuse } = await setup(PATIENT);
        const limit = { tokensPerMinute: 1000 };
        const big = await grant({ limit, tokens: 600 });
        await refuse('tokens', { limit, waiterId: 'second', tokens: 500 });
        await cap.release(big, { ok: true, usedTokens: 300 });
        const second = await grant({ limit, waiterId: 'second', tokens: 500 });
        // 300 + 500 counted: 300 more fit, 301 do not.
        await refuse('tokens', { limit, waiterId: 'third', tokens: 201 });
        await cap.release(second, { ok: true, usedTokens: 700 });
        // 300 + 700 counted: the window is full.
        await refuse('tokens', { limit, waiterId: 'third', tokens: 1 });
      });

      it('a release without usage keeps the estimate counted', async () => {
        const { cap, grant, refuse } = await setup(PATIENT);
        const limit = { tokensPerMinute: 1000 };
        const first = await grant({ limit, tokens: 600 });
        await cap.release(first, { ok: true });
        await refuse('tokens', { limit, waiterId: 'second', tokens: 500 });
      });

      it('refuses until enough tokens leave the window, then grants', async () => {
        const { grant, refuse } = await setup();
        const limit = { tokensPerMinute: 1000 };
        const span = TIMINGS.windowMs + WINDOW_MARGIN_MS;
        const firstAsked = Date.now();
        await grant({ limit, tokens: 400 });
        const firstAnswered = Date.now();
        await sleep(300);
        await grant({ limit, tokens: 400 });
        const refusedAsked = Date.now();
        // 800 + 300 > 1000: the first grant's 400 must leave the window, not the second's.
        const retryAfterMs = await refuse('tokens', { limit, waiterId: 'third', tokens: 300 });
        const refusedAnswered = Date.now();
        expect(retryAfterMs).toBeLessThanOrEqual(span - (refusedAsked - firstAnswered) + SLACK_MS);
        expect(retryAfterMs).toBeGreaterThanOrEqual(
          span - (refusedAnswered - firstAsked) - SLACK_MS,
        );
        await sleep(retryAfterMs + 50);
        await grant({ limit, waiterId: 'third', tokens: 300 });
      });

      it('a request whose own estimate exceeds the limit is granted when the window is empty', async () => {
        const { grant, refuse } = await setup(PATIENT);
        const limit = { tokensPerMinute: 100 };
        await grant({ limit, tokens: 500 });
        await refuse('tokens', { limit, waiterId: 'small', tokens: 1 });
      });
    });

    describe("a provider's 429", () => {
      it('pauses the model for every waiter until the pause ends, and only that model', async () => {
        const { cap, model, grant, refuse, request } = await setup();
        const limit = { concurrency: 8 };
        const permit = await grant({ limit });
        const pausedAt = Date.now();
        const pausedForMs = await cap.rateLimited(permit, { retryAfterMs: 500 }, limit);
        expect(pausedForMs).toBeGreaterThanOrEqual(500 - SLACK_MS);
        expect(pausedForMs).toBeLessThanOrEqual(500 + SLACK_MS);
        for (const waiterId of ['a', 'b', 'c']) {
          const retryAfterMs = await refuse('paused', { limit, waiterId });
          expect(retryAfterMs).toBeLessThanOrEqual(500 + SLACK_MS);
          expect(retryAfterMs).toBeGreaterThanOrEqual(500 - (Date.now() - pausedAt) - SLACK_MS);
        }
        const other = await cap.tryAcquire({ ...request({ limit }), model: `${model}-other` });
        expect(other.granted).toBe(true);

        await sleep(Math.max(0, pausedAt + 500 - Date.now()) + 50);
        await grant({ limit, waiterId: 'a' });
      });

      it('the pause lasts what the headers say', async () => {
        const { cap, grant } = await setup();
        const cases: Array<[Parameters<ModelCapacity['rateLimited']>[1], number]> = [
          [{ retryAfterMs: 200, remainingRequests: 0, resetRequestsMs: 700 }, 700],
          [{ retryAfterMs: 150, remainingTokens: 5, resetTokensMs: 900 }, 150],
          [{ remainingTokens: 0, resetTokensMs: 800, resetRequestsMs: 100 }, 800],
          [{ resetTokensMs: 300 }, 300],
          [{}, 1000],
        ];
        for (const [info, expected] of cases) {
          // A model of its own each: a model already paused keeps the later end.
          const permit = await grant({ model: `m-${randomUUID()}` });
          const pausedForMs = await cap.rateLimited(permit, info, undefined);
          expect(pausedForMs, JSON.stringify(info)).toBeGreaterThanOrEqual(expected - SLACK_MS);
          expect(pausedForMs, JSON.stringify(info)).toBeLessThanOrEqual(expected + SLACK_MS);
        }
      });

      it("the 429'd request still counts toward the window", async () => {
        const { cap, grant, refuse } = await setup();
        const limit = { requestsPerMinute: 1 };
        const permit = await grant({ limit });
        await cap.rateLimited(permit, { retryAfterMs: 100 }, limit);
        await sleep(150);
        await refuse('requests', { limit, waiterId: 'next' });
      });

      /**
       * Takes a 429 at the configured cap 8 (halved to 4), waits out its pause (and the memory of
       * it, with `forgetFirst`), then fills the cap and releases one permit at a time with success
       * until `top` is reached, and checks that 20 more successes do not raise it past.
       */
      async function climbAfter429(timings: ConformanceTimings, top: number, forgetFirst: boolean) {
        const opened = await setup(timings);
        const { cap, grant, ask, snapshotOf } = opened;
        const limit = { concurrency: 8 };
        const permit = await grant({ limit });
        const pausedForMs = await cap.rateLimited(permit, { retryAfterMs: 200 }, limit);
        expect((await snapshotOf())?.concurrencyLimit).toBe(4);
        // A fixed time: the pause (and, with a short memory, the memory) is a timer under test and must be over.
        await sleep(Math.max(pausedForMs, forgetFirst ? timings.ceilingMemoryMs : 0) + 50);

        // Fill the cap with one waiter after the other (a refused waiter keeps its place in line).
        const held: Permit[] = [];
        let next = 0;
        const fill = async (): Promise<void> => {
          for (;;) {
            const answer = await ask({ limit, waiterId: `w${next}` });
            if (!answer.granted) {
              expect(answer.reason).toBe('concurrency');
              return;
            }
            held.push(answer.permit);
            next++;
          }
        };
        await fill();
        expect(held).toHaveLength(4);

        const caps: number[] = [4];
        for (let releases = 0; caps.at(-1)! < top; releases++) {
          expect(releases, `cap still ${caps.at(-1)} after ${releases} successes`).toBeLessThan(
            200,
          );
          await cap.release(held.shift()!, { ok: true });
          await fill();
          caps.push(held.length);
          expect((await snapshotOf())?.concurrencyLimit).toBe(held.length);
        }
        // Step by step: it took several successes to climb each step, one step at a time.
        expect(caps.length).toBeGreaterThan(top);
        for (let i = 1; i < caps.length; i++) {
          expect(caps[i]! - caps[i - 1]!).toBeGreaterThanOrEqual(0);
          expect(caps[i]! - caps[i - 1]!).toBeLessThanOrEqual(1);
        }
        // At the top, more successes never raise it past.
        for (let i = 0; i < 20; i++) {
          await cap.release(held.shift()!, { ok: true });
          await fill();
        }
        expect(held).toHaveLength(top);
        expect((await snapshotOf())?.concurrencyLimit).toBe(top);
        return { ...opened, limit, next };
      }

      it('halves the concurrency cap, which grows back step by step on success to one below the cap that drew the 429, while the fleet remembers it', async () => {
        const { refuse, limit, next } = await climbAfter429(PATIENT, 7, false);
        await refuse('concurrency', { limit, waiterId: `w${next}` });
      });

      it('once the 429 is forgotten, successes raise the cap back to the configured one, never above', async () => {
        const { refuse, limit, next } = await climbAfter429(
          { ...PATIENT, ceilingMemoryMs: 300 },
          8,
          true,
        );
        await refuse('concurrency', { limit, waiterId: `w${next}` });
      });

      it('the cap that drew a 429 and is remembered: a later 429 lower down lowers it', async () => {
        const { cap, grant, snapshotOf } = await setup(PATIENT);
        const limit = { concurrency: 8 };
        await cap.rateLimited(await grant({ limit }), { retryAfterMs: 50 }, limit);
        expect((await snapshotOf())?.concurrencyLimit).toBe(4);
        await sleep(100);
        // A 429 at the halved cap: halved again, and remembered below it.
        await cap.rateLimited(await grant({ limit }), { retryAfterMs: 50 }, limit);
        expect((await snapshotOf())?.concurrencyLimit).toBe(2);
        await sleep(100);
        for (let i = 0; i < 30; i++) await cap.release(await grant({ limit }), { ok: true });
        expect((await snapshotOf())?.concurrencyLimit).toBe(3);
      });

      it('a failed request does not grow the cap back', async () => {
        const { cap, grant, snapshotOf } = await setup(PATIENT);
        const limit = { concurrency: 8 };
        await cap.rateLimited(await grant({ limit }), { retryAfterMs: 50 }, limit);
        await sleep(100);
        for (let i = 0; i < 10; i++) await cap.release(await grant({ limit }), { ok: false });
        expect((await snapshotOf())?.concurrencyLimit).toBe(4);
      });

      it('several 429s within one pause halve the cap once, and the latest end wins', async () => {
        const { cap, grant, snapshotOf } = await setup(PATIENT);
        const limit = { concurrency: 8 };
        const permits = [await grant({ limit }), await grant({ limit }), await grant({ limit })];
        const startedAt = Date.now();
        const first = await cap.rateLimited(permits[0]!, { retryAfterMs: 300 }, limit);
        const second = await cap.rateLimited(permits[1]!, { retryAfterMs: 600 }, limit);
        const third = await cap.rateLimited(permits[2]!, { retryAfterMs: 100 }, limit);
        const elapsed = Date.now() - startedAt;
        expect(first).toBeGreaterThanOrEqual(300 - SLACK_MS);
        expect(second).toBeGreaterThanOrEqual(600 - SLACK_MS);
        // The shorter third pause does not cut the second one short.
        expect(third).toBeGreaterThanOrEqual(600 - elapsed - SLACK_MS);
        const snapshot = await snapshotOf();
        expect(snapshot?.concurrencyLimit).toBe(4);
        expect(snapshot?.inFlight).toBe(0);
        expect(snapshot?.pausedForMs).toBeGreaterThan(0);
        expect(snapshot?.pausedForMs).toBeLessThanOrEqual(600 + SLACK_MS);
      });

      it('a model with no configured limit gets an adaptive concurrency cap at its first 429', async () => {
        const { cap, grant, ask, snapshotOf } = await setup(PATIENT);
        const before = await grant({ limit: undefined });
        expect(before.holdsSlot).toBe(false);
        const pausedForMs = await cap.rateLimited(before, { retryAfterMs: 150 }, undefined);
        const adaptive = (await snapshotOf())?.concurrencyLimit;
        expect(adaptive).toBeGreaterThanOrEqual(1);
        await sleep(pausedForMs + 50);

        const held: Permit[] = [];
        for (let i = 0; i < adaptive!; i++) {
          const permit = await grant({ limit: undefined, waiterId: `w${i}` });
          expect(permit.holdsSlot).toBe(true);
          held.push(permit);
        }
        expect(await ask({ limit: undefined, waiterId: 'over' })).toMatchObject({
          granted: false,
          reason: 'concurrency',
        });
        // Successes raise it again.
        for (const permit of held) await cap.release(permit, { ok: true });
        expect((await snapshotOf())?.concurrencyLimit).toBeGreaterThan(adaptive!);
      });
    });

    describe('fairness', () => {
      it("round robin across tenants: one waiter of B is granted before A's later ones", async () => {
        const { cap, grant, refuse, turnOver } = await setup(PATIENT);
        const limit = { concurrency: 1 };
        const holder = await grant({ limit, tenant: 'holder' });
        const acme = Array.from({ length: 10 }, (_, i) => ({
          waiterId: `acme-${i}`,
          tenant: 'acme',
        }));
        const globex = [{ waiterId: 'globex-0', tenant: 'globex' }];
        for (const waiter of [...acme, ...globex])
          await refuse('concurrency', { ...waiter, limit });
        await cap.release(holder, { ok: true });

        const order = await turnOver([...acme, ...globex], 11, limit);
        expect(order.indexOf('globex-0')).toBeLessThanOrEqual(1);
        // Within a tenant of equal priority, by age.
        expect(order.filter((id) => id.startsWith('acme'))).toEqual(acme.map((w) => w.waiterId));
      });

      it('weights 3:1 give about three grants to one', async () => {
        const { cap, grant, refuse, turnOver } = await setup(PATIENT);
        const limit = { concurrency: 1 };
        const holder = await grant({ limit, tenant: 'holder' });
        const acme = Array.from({ length: 16 }, (_, i) => ({
          waiterId: `acme-${i}`,
          tenant: 'acme',
          weight: 3,
        }));
        const globex = Array.from({ length: 16 }, (_, i) => ({
          waiterId: `globex-${i}`,
          tenant: 'globex',
          weight: 1,
        }));
        for (const waiter of [...globex, ...acme])
          await refuse('concurrency', { ...waiter, limit });
        await cap.release(holder, { ok: true });

        const order = await turnOver([...globex, ...acme], 16, limit);
        const acmeGrants = order.filter((id) => id.startsWith('acme')).length;
        expect(acmeGrants).toBeGreaterThanOrEqual(11);
        expect(acmeGrants).toBeLessThanOrEqual(13);
      });

      it('within a tenant: priority 1 before 5, then the one that has waited longer', async () => {
        const { cap, grant, refuse, turnOver } = await setup(PATIENT);
        const limit = { concurrency: 1 };
        const holder = await grant({ limit, tenant: 'acme' });
        const waiters = [
          { waiterId: 'newer-p5', tenant: 'acme', priority: 5 },
          { waiterId: 'p1', tenant: 'acme', priority: 1 },
          // Asked last, but parked for a minute before: older than the others.
          { waiterId: 'aged-p5', tenant: 'acme', priority: 5, waitedMs: 60_000 },
        ];
        for (const waiter of waiters) await refuse('concurrency', { ...waiter, limit });
        await cap.release(holder, { ok: true });
        expect(await turnOver(waiters, 3, limit)).toEqual(['p1', 'aged-p5', 'newer-p5']);
      });

      it('a waiter in line goes first: a newcomer is refused for fairness while it is present', async () => {
        const { cap, grant, refuse } = await setup(PATIENT);
        const limit = { concurrency: 1 };
        const holder = await grant({ limit });
        await refuse('concurrency', { limit, waiterId: 'first' });
        await cap.release(holder, { ok: true });
        const retryAfterMs = await refuse('fairness', { limit, waiterId: 'newcomer' });
        expect(retryAfterMs).toBeLessThanOrEqual(1000);
        await grant({ limit, waiterId: 'first' });
      });

      it('a waiter that stopped asking does not block the others', async () => {
        const { cap, grant, refuse } = await setup();
        const limit = { concurrency: 1 };
        const holder = await grant({ limit });
        await refuse('concurrency', { limit, waiterId: 'gone', priority: 1 });
        await cap.release(holder, { ok: true });
        await sleep(TIMINGS.waiterTtlMs + 150);
        await grant({ limit, waiterId: 'newcomer' });
      });

      it('leave() takes a waiter out of line', async () => {
        const { cap, model, grant, refuse, snapshotOf } = await setup(PATIENT);
        const limit = { concurrency: 1 };
        const holder = await grant({ limit });
        await refuse('concurrency', { limit, waiterId: 'parked', priority: 1 });
        expect((await snapshotOf())?.waiting).toBe(1);
        await cap.leave(model, 'parked');
        expect((await snapshotOf())?.waiting).toBe(0);
        await cap.release(holder, { ok: true });
        await grant({ limit, waiterId: 'newcomer' });
      });
    });

    describe('paced grants (docs/capacity.md, "Paced grants")', () => {
      /** A window long enough that its 250 ms margin costs little quota: 50 requests in 5 s, one every 100 ms, 3 at once. */
      const PACED: ConformanceTimings = { ...PATIENT, windowMs: 5000 };
      const limit = { requestsPerMinute: 50 };
      const BURST = 3;
      /**
       * The same limit over a window ten times as long: one grant a second, 3 at once. For a test
       * whose calls must all fall within one step, so that a loaded machine's round trips cannot
       * outlast it.
       */
      const SLOW_PACED: ConformanceTimings = { ...PACED, windowMs: 50_000 };
      const STEP_MS = SLOW_PACED.windowMs / limit.requestsPerMinute;

      it('grants the burst allowance at once, then one a step apart; a refused waiter is told its paced slot', async () => {
        const { grant, refuse } = await setup(SLOW_PACED);
        const firstAsked = Date.now();
        for (let i = 0; i < BURST; i++) await grant({ limit, waiterId: `burst-${i}` });
        // The limiter tells a wait from its own time, somewhere between a request and its answer:
        // each bound takes the widest span of client time that can hold it.
        const beforeFirstRefusal = Date.now();
        const first = await refuse('requests', { limit, waiterId: 'first-in-line' });
        const refusedAnswered = Date.now();
        // The next paced grant is BURST steps after the first, less the burst's tolerance.
        expect(first).toBeLessThanOrEqual(STEP_MS + SLACK_MS);
        expect(first).toBeGreaterThanOrEqual(STEP_MS - (refusedAnswered - firstAsked) - SLACK_MS);
        // One step more for each waiter ahead.
        const second = await refuse('requests', { limit, waiterId: 'second-in-line' });
        expect(second).toBeGreaterThanOrEqual(
          first + STEP_MS - (Date.now() - beforeFirstRefusal) - SLACK_MS,
        );
        await sleep(first + 20);
        await grant({ limit, waiterId: 'first-in-line' });
      });

      it('a backlog is granted at the paced rate: at least 90 % of the limit over a window, never more than the limit in any window, no burst', async () => {
        const { cap, ask } = await setup(PACED);
        const start = Date.now();
        const grants: number[] = [];
        const backlog = Array.from(
          { length: 3 * limit.requestsPerMinute },
          (_, i) => `backlog-${i}`,
        );
        // Each waiter of the backlog asks in turn when told to; a permit is released at once.
        let retryAt = start;
        while (Date.now() - start < PACED.windowMs) {
          await sleep(Math.max(0, retryAt - Date.now()));
          const answer = await ask({ limit, waiterId: backlog[grants.length]! });
          if (answer.granted) {
            grants.push(Date.now() - start);
            await cap.release(answer.permit, { ok: true });
            retryAt = Date.now();
          } else retryAt = Date.now() + answer.retryAfterMs;
        }
        // Quota used while the backlog waits: the window's worth, less the margin and the asks' own time.
        expect(grants.length).toBeGreaterThanOrEqual(0.9 * limit.requestsPerMinute);
        // A provider counting the same window sees no more than the limit: no 429.
        for (const [i, at] of grants.entries()) {
          expect(
            grants.filter((t) => t >= at && t < at + PACED.windowMs).length,
            `window from grant ${i}`,
          ).toBeLessThanOrEqual(limit.requestsPerMinute);
        }
        // Spread across the window: its first fifth holds a fifth of the grants and the burst, not the window's worth.
        expect(grants.filter((t) => t < PACED.windowMs / 5).length).toBeLessThanOrEqual(
          limit.requestsPerMinute / 5 + BURST,
        );
      });

      it('wake() lets in only as many held waiters as the pacing lets go now', async () => {
        // One every 2 s, 2 at once: after the two, the next goes 2 s after the first and a second 2 s later.
        // Steps this long keep the eight calls before the first wake inside one, however loaded the machine.
        const timings = { ...PACED, windowMs: 20_000 };
        const { cap, model, grant, refuse } = await setup(timings);
        const slow = { requestsPerMinute: 10 };
        const slowStepMs = timings.windowMs / slow.requestsPerMinute;
        await grant({ limit: slow, waiterId: 'burst-0' });
        // The pacing counts from the first grant's moment in the limiter, at most this.
        const firstAnswered = Date.now();
        await grant({ limit: slow, waiterId: 'burst-1' });
        for (const waiterId of ['a', 'b', 'c']) {
          await refuse('requests', { limit: slow, waiterId });
          await cap.hold(model, waiterId, 60_000);
        }
        expect(await cap.wake(model, slow)).toEqual([]);
        await sleep(Math.max(0, firstAnswered + slowStepMs + 100 - Date.now()));
        expect(await cap.wake(model, slow)).toEqual(['a']);
      });
    });

    describe('ready(): would a permit be granted now', () => {
      it('answers as tryAcquire would, taking nothing: no slot, no window entry, no paced step', async () => {
        const { cap, model, grant, snapshotOf, request } = await setup(PATIENT);
        const limit = { concurrency: 1, requestsPerMinute: 2 };
        // Asked as often as wanted, it takes nothing: the two requests a window are still there.
        for (let i = 0; i < 3; i++)
          expect(await cap.ready(request({ limit, waiterId: 'a' }))).toBeUndefined();
        expect((await snapshotOf())?.inFlight).toBe(0);
        const held = await grant({ limit, waiterId: 'a' });
        expect(await cap.ready(request({ limit, waiterId: 'b' }))).toMatchObject({
          reason: 'concurrency',
        });
        await cap.release(held, { ok: true });
        expect(await cap.ready(request({ limit, waiterId: 'b' }))).toBeUndefined();
        await grant({ limit, waiterId: 'b' });
        // Both a slot and the window's two requests are taken now.
        expect(await cap.ready(request({ limit, waiterId: 'c' }))).toMatchObject({
          granted: false,
        });
        expect((await snapshotOf(model))?.inFlight).toBe(1);
      });

      it('leaves the waiter in line as asking: a newcomer is refused for fairness behind it', async () => {
        const { cap, grant, refuse, request } = await setup(PATIENT);
        const limit = { concurrency: 1 };
        const holder = await grant({ limit });
        expect(await cap.ready(request({ limit, waiterId: 'back', priority: 1 }))).toMatchObject({
          reason: 'concurrency',
        });
        await cap.release(holder, { ok: true });
        expect(await cap.ready(request({ limit, waiterId: 'back', priority: 1 }))).toBeUndefined();
        await refuse('fairness', { limit, waiterId: 'newcomer' });
        await grant({ limit, waiterId: 'back', priority: 1 });
      });
    });

    describe('a parked waiter held in line', () => {
      it('hold() keeps it in line past the waiter TTL: the waiters behind it are told to wait for its turn too', async () => {
        const { cap, model, grant, refuse, snapshotOf } = await setup();
        const limit = { concurrency: 1 };
        await grant({ limit });
        const alone = await refuse('concurrency', { limit, waiterId: 'parked', priority: 1 });
        await cap.hold(model, 'parked', 10 * TIMINGS.waiterTtlMs);
        // Absent longer than the TTL, still in line: counted as waiting, and ahead of a later waiter.
        await sleep(TIMINGS.waiterTtlMs + 150);
        expect((await snapshotOf())?.waiting).toBe(1);
        const behind = await refuse('concurrency', { limit, waiterId: 'behind' });
        // One hold time per place ahead: twice the wait of the first in line.
        expect(behind).toBeGreaterThanOrEqual(2 * alone - SLACK_MS);
      });

      it('a waiter more than a window of requests behind is told to wait a whole window more for each', async () => {
        const { cap, model, grant, refuse } = await setup();
        const limit = { requestsPerMinute: 1 };
        await grant({ limit });
        const first = await refuse('requests', { limit, waiterId: 'parked', priority: 1 });
        await cap.hold(model, 'parked', 10 * TIMINGS.windowMs);
        const behind = await refuse('requests', { limit, waiterId: 'behind' });
        expect(behind).toBeGreaterThanOrEqual(first + TIMINGS.windowMs - SLACK_MS);
      });

      it('while room is free, a held waiter does not keep it from a waiter that asks, and asks again in its place', async () => {
        const { cap, model, grant, refuse } = await setup();
        const limit = { concurrency: 1 };
        const holder = await grant({ limit });
        await refuse('concurrency', { limit, waiterId: 'parked', priority: 1 });
        await cap.hold(model, 'parked', 10 * TIMINGS.waiterTtlMs);
        await cap.release(holder, { ok: true });
        const asking = await grant({ limit, waiterId: 'asking' });
        await refuse('concurrency', { limit, waiterId: 'parked', priority: 1 });
        await cap.release(asking, { ok: true });
        // Back and asking, it is first in line again: ahead of a newcomer.
        await refuse('fairness', { limit, waiterId: 'newcomer' });
        await grant({ limit, waiterId: 'parked', priority: 1 });
      });

      it('wake() names the held waiters that free room lets in, in fair order, once each; none while the room is taken', async () => {
        const { cap, model, grant, refuse } = await setup(PATIENT);
        const limit = { concurrency: 2 };
        const first = await grant({ limit });
        const second = await grant({ limit });
        await refuse('concurrency', { limit, waiterId: 'later' });
        await refuse('concurrency', { limit, waiterId: 'urgent', priority: 1 });
        await cap.hold(model, 'later', 60_000);
        await cap.hold(model, 'urgent', 60_000);
        expect(await cap.wake(model, limit)).toEqual([]);
        await cap.release(first, { ok: true });
        expect(await cap.wake(model, limit)).toEqual(['urgent']);
        // Woken, it counts as asking: the room is kept for it.
        expect(await cap.wake(model, limit)).toEqual([]);
        await refuse('fairness', { limit, waiterId: 'newcomer' });
        const urgent = await grant({ limit, waiterId: 'urgent', priority: 1 });
        await cap.release(second, { ok: true });
        // The newcomer asking takes that room: nobody held is woken for it.
        expect(await cap.wake(model, limit)).toEqual([]);
        await grant({ limit, waiterId: 'newcomer' });
        await cap.release(urgent, { ok: true });
        expect(await cap.wake(model, limit)).toEqual(['later']);
      });

      it('a held waiter that never comes back leaves the line once its hold and the TTL pass; one not in line is not put back', async () => {
        const { cap, model, grant, refuse, snapshotOf } = await setup();
        const limit = { concurrency: 1 };
        const holder = await grant({ limit });
        await refuse('concurrency', { limit, waiterId: 'lost', priority: 1 });
        await cap.hold(model, 'lost', TIMINGS.waiterTtlMs);
        await cap.hold(model, 'never-asked', 60_000);
        expect((await snapshotOf())?.waiting).toBe(1);
        await cap.release(holder, { ok: true });
        await sleep(2 * TIMINGS.waiterTtlMs + 150);
        expect((await snapshotOf())?.waiting ?? 0).toBe(0);
        await grant({ limit, waiterId: 'newcomer' });
      });
    });

    describe('snapshot', () => {
      it('reports waiting, in flight, the cap in force and the pause of each model seen', async () => {
        const { cap, model, grant, refuse, snapshotOf } = await setup(PATIENT);
        const limit = { concurrency: 2 };
        const first = await grant({ limit });
        await grant({ limit });
        for (const waiterId of ['a', 'b', 'c']) await refuse('concurrency', { limit, waiterId });
        expect(await snapshotOf()).toEqual({
          model,
          waiting: 3,
          inFlight: 2,
          concurrencyLimit: 2,
          pausedForMs: 0,
        });

        const rpmModel = `${model}-rpm`;
        await grant({ model: rpmModel, limit: { requestsPerMinute: 10 } });
        const rpm = await snapshotOf(rpmModel);
        expect(rpm).toMatchObject({ model: rpmModel, waiting: 0, pausedForMs: 0 });
        expect(rpm?.concurrencyLimit).toBeUndefined();

        const pausedForMs = await cap.rateLimited(first, { retryAfterMs: 800 }, limit);
        const paused = await snapshotOf();
        expect(paused).toMatchObject({ model, waiting: 3, inFlight: 1, concurrencyLimit: 1 });
        expect(paused?.pausedForMs).toBeGreaterThan(0);
        expect(paused?.pausedForMs).toBeLessThanOrEqual(pausedForMs);
      });

      it('counts only the waiters that still ask', async () => {
        const { grant, refuse, snapshotOf } = await setup();
        const limit = { concurrency: 1 };
        await grant({ limit });
        await refuse('concurrency', { limit, waiterId: 'stopped-asking' });
        await sleep(TIMINGS.waiterTtlMs + 150);
        expect(await snapshotOf()).toMatchObject({ waiting: 0, inFlight: 1, concurrencyLimit: 1 });
      });
    });
  });
}
