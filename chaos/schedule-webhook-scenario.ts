import { setTimeout as delay } from 'node:timers/promises';
import {
  createClient,
  type CairnClient,
  type EntityRef,
  type ScheduleOverlap,
} from '@cairn/client';
import { FINAL_STATUSES } from '@cairn/engine';
import { ScheduleQueue } from '@cairn/queue';
import { WebhookReceiver } from '../tests/webhooks/webhook-receiver.js';
import { pendingActions, postApproval } from './approval-scenario.js';
import { retrying, statusCounts } from './chaos-db.js';
import type { ChaosFleet } from './chaos-fleet.js';
import type { ChaosProducer, ChaosProducers } from './chaos-producers.js';
import { CHAOS_OPERATOR, CHAOS_TEAM } from './chaos-registry.js';
import type { ScenarioContext } from './scenario-context.js';
import {
  checkScheduleWebhookGoals,
  undeliveredMessages,
  type ScheduleWebhookGoals,
} from './schedule-webhook-checks.js';
import { seededRandom } from './seeded-random.js';

/** The scenario's name (its runs' `chaos_scenario`). */
export const SCHEDULE_WEBHOOK_SCENARIO = 'schedules-webhooks';

/** Its own run queue, so that only its producers take its firings and only its workers its runs. */
const QUEUE = 'chaos-schedules';

/** Webhook settings of its processes: quick retries, many of them, a receiver on 127.0.0.1. */
const WEBHOOK_ENV = {
  CAIRN_QUEUE_NAME: QUEUE,
  CAIRN_WEBHOOK_ALLOW_PRIVATE: 'true',
  CAIRN_WEBHOOK_BACKOFF_MS: '200',
  CAIRN_WEBHOOK_MAX_BACKOFF_MS: '1000',
  CAIRN_WEBHOOK_MAX_ATTEMPTS: '200',
  CAIRN_WEBHOOK_POLL_MS: '200',
};

/** The schedules it creates: one at the documented minimum interval, each ending its runs another way. */
const SCHEDULES: readonly {
  name: string;
  entity: EntityRef;
  every_ms: number;
  overlap: ScheduleOverlap;
  deadline_ms?: number;
}[] = [
  // At the documented minimum: a firing while the previous run is unfinished is recorded skipped (schedule.run_skipped); runs end run.completed.
  { name: 'every-1s', entity: { kind: 'team', name: CHAOS_TEAM }, every_ms: 1000, overlap: 'skip' },
  // A deadline no run meets: each ends in ERROR (run.errored); runs may overlap.
  {
    name: 'deadline',
    entity: { kind: 'team', name: CHAOS_TEAM },
    every_ms: 2000,
    overlap: 'allow',
    deadline_ms: 300,
  },
  // Each run pauses for approval (run.paused), is approved, then completes (run.completed).
  {
    name: 'approval',
    entity: { kind: 'agent', name: CHAOS_OPERATOR },
    every_ms: 3000,
    overlap: 'allow',
  },
];

/** Its workers' slots, apart from the other scenarios' (their log files are `w<slot>-g<n>.log`). */
const FIRST_SLOT = 30;
const WORKERS = 2;

/** What {@link runScheduleWebhookScenario} takes. */
export interface ScheduleWebhookScenarioOptions {
  /** SIGKILLs, alternately of a worker and of a producer. */
  kills: number;
  /** How long the schedules fire while the kills happen. */
  windowMs: number;
  seed: number;
  /** The drain gives up once no run has finished (or no notification arrived) for this long. */
  drainMs: number;
  /** A worker fleet on the harness's configuration and `extra`. */
  fleetWith(extra: Record<string, string>): ChaosFleet;
  /** Producers on the harness's configuration and `extra`. */
  producersWith(extra: Record<string, string>): ChaosProducers;
  /** The Redis the queues live on. */
  redisUrl: string;
}

/** A fault as injected. */
interface InjectedKill {
  kind: 'sigkill-worker' | 'sigkill-producer';
  target: string;
  /** When the schedule asked for it, and when it was injected (a producer's kill waits for the last replacement to listen), from the start. */
  plannedAtMs: number;
  atMs: number;
}

/** What the scenario found; every goal is 0 when it passed. */
export interface ScheduleWebhookScenarioReport {
  scenario: string;
  durationMs: number;
  /** True when every run ended and every recorded event reached the receiver before the drain gave up. */
  drained: boolean;
  kills: InjectedKill[];
  /** When the receiver was down, from the scenario's start. */
  receiverDown: { fromMs: number; toMs: number };
  firings: Record<string, Record<string, number>>;
  runs: Record<string, number>;
  events: Record<string, number>;
  /** Requests the receiver got (every attempt) and how many it accepted. */
  requests: { received: number; accepted: number };
  decisions: { posted: number; answers: Record<string, number> };
  goals: ScheduleWebhookGoals;
  passed: boolean;
}

/**
 * Schedules and webhooks under kills: two producers (which take the schedules' firings) and two
 * workers (which run the runs and deliver the webhooks) on a queue of their own; three interval
 * schedules fire (one every second, the documented minimum) while `kills` SIGKILLs hit a worker
 * and a producer in turn (a producer only while the other is up; each is replaced at once); a
 * receiver verifies every request with `standardwebhooks`, refuses the first attempts of
 * `run.paused` and `run.errored` messages, and goes down for 15% of the window. Paused runs are
 * approved over HTTP. Then: no firing lost or doubled, no notification lost, none out of order
 * per run (`schedule-webhook-checks.ts`).
 */
export async function runScheduleWebhookScenario(
  ctx: ScenarioContext,
  options: ScheduleWebhookScenarioOptions,
): Promise<ScheduleWebhookScenarioReport> {
  const random = seededRandom(options.seed + 29);
  const receiver = new WebhookReceiver();
  receiver.failFirstOf = { 'run.paused': 4, 'run.errored': 1 };
  const fleet = options.fleetWith(WEBHOOK_ENV);
  const producers = options.producersWith(WEBHOOK_ENV);
  const killAll = () => {
    producers.killAllSync();
    for (const w of fleet.all) if (w.app.alive) w.app.proc.kill('SIGKILL');
  };
  process.on('exit', killAll);
  const firingQueue = await ScheduleQueue.open({ redisUrl: options.redisUrl, queueName: QUEUE });
  try {
    await receiver.up();
    await Promise.all([
      producers.spawn(0),
      producers.spawn(1),
      ...Array.from({ length: WORKERS }, (_, i) =>
        fleet.spawn(FIRST_SLOT + i).app.waitForLog('worker started', 120_000),
      ),
    ]);
    const { rows } = await ctx.db.query<{ last: string }>(
      'select coalesce(max(event_id), 0)::text as last from webhook_events',
    );
    const afterEventId = rows[0]!.last;
    const client = clientOf(ctx, producers.serving()[0]!);
    const { secret } = await client.webhooks.create({
      url: receiver.url,
      description: 'chaos receiver',
    });
    receiver.useSecret(secret);
    const startedAt = Date.now();
    const scheduleIds = new Map<string, string>();
    for (const { name, ...fields } of SCHEDULES) {
      const created = await client.schedules.create({
        ...fields,
        input: `scheduled ${name}`,
        metadata: { chaos_scenario: SCHEDULE_WEBHOOK_SCENARIO, chaos_schedule: name },
      });
      scheduleIds.set(created.schedule_id, name);
    }
    const decider = startDecider(ctx, producers);
    const receiverDown = {
      fromMs: Math.round(options.windowMs * 0.4),
      toMs: Math.round(options.windowMs * 0.55),
    };
    const outage = (async () => {
      await delay(receiverDown.fromMs);
      await receiver.down();
      ctx.log(`  [${SCHEDULE_WEBHOOK_SCENARIO}] receiver down`);
      await delay(receiverDown.toMs - receiverDown.fromMs);
      await receiver.up();
      ctx.log(`  [${SCHEDULE_WEBHOOK_SCENARIO}] receiver up`);
    })();
    const kills = await injectKills(ctx, options, fleet, producers, random, startedAt);
    await outage;

    // The window is over: pause the schedules, wait until no firing is left, then for the runs and the notifications.
    await retrying(async () => {
      for (const id of scheduleIds.keys())
        await clientOf(ctx, producers.serving()[0]!).schedules.update(id, { paused: true });
    });
    const drained =
      (await settled(
        ctx,
        'firings',
        async () => {
          const counts = await firingQueue.queue.getJobCounts('active', 'waiting', 'delayed');
          return (counts.active ?? 0) + (counts.waiting ?? 0) + (counts.delayed ?? 0);
        },
        options.drainMs,
      )) &&
      (await settled(
        ctx,
        'runs',
        async () => {
          const counts = await retrying(() => statusCounts(ctx.db, SCHEDULE_WEBHOOK_SCENARIO));
          return Object.entries(counts)
            .filter(([status]) => !FINAL_STATUSES.includes(status as never))
            .reduce((sum, [, n]) => sum + n, 0);
        },
        options.drainMs,
      )) &&
      (await settled(
        ctx,
        'notifications',
        async () =>
          (
            await undeliveredMessages(
              ctx.db,
              afterEventId,
              new Set(receiver.accepted().map((r) => r.id)),
            )
          ).length,
        options.drainMs,
      ));
    const decisions = await decider.stop();
    const checked = await checkScheduleWebhookGoals(ctx.db, {
      scenario: SCHEDULE_WEBHOOK_SCENARIO,
      schedules: [...scheduleIds].map(([id, name]) => ({
        id,
        name,
        everyMs: SCHEDULES.find((s) => s.name === name)!.every_ms,
      })),
      afterEventId,
      received: receiver.received,
    });
    return {
      scenario: SCHEDULE_WEBHOOK_SCENARIO,
      durationMs: Date.now() - startedAt,
      drained,
      kills,
      receiverDown,
      ...checked.info,
      requests: { received: receiver.received.length, accepted: receiver.accepted().length },
      decisions,
      goals: checked.goals,
      passed: drained && Object.values(checked.goals).every((n) => n === 0),
    };
  } finally {
    await Promise.allSettled([fleet.stopAll(), producers.stopAll(), receiver.down()]);
    await firingQueue.close().catch(() => undefined);
    process.off('exit', killAll);
  }
}

function clientOf(ctx: ScenarioContext, producer: ChaosProducer): CairnClient {
  return createClient({ baseUrl: producer.baseUrl, apiKey: ctx.api.apiKey });
}

/** `kills` SIGKILLs spread over the window with jitter, a worker then a producer in turn (a producer once the last one replaced listens); each victim is replaced at once. */
async function injectKills(
  ctx: ScenarioContext,
  options: ScheduleWebhookScenarioOptions,
  fleet: ChaosFleet,
  producers: ChaosProducers,
  random: () => number,
  startedAt: number,
): Promise<InjectedKill[]> {
  const injected: InjectedKill[] = [];
  const starting: Promise<unknown>[] = [];
  const slot = options.windowMs / Math.max(1, options.kills);
  for (let k = 0; k < options.kills; k++) {
    const plannedAt = startedAt + Math.round(k * slot + (0.2 + random() * 0.6) * slot);
    await delay(Math.max(0, plannedAt - Date.now()));
    const pick = random();
    // A producer only once the other one serves: firings always have a producer to take them.
    if (k % 2 === 1) await Promise.all(starting);
    const servingProducers = producers.serving();
    if (k % 2 === 1 && servingProducers.length >= 2) {
      const victim = servingProducers[Math.floor(pick * servingProducers.length)]!;
      await producers.kill(victim);
      starting.push(producers.spawn(victim.slot).catch(() => undefined));
      injected.push({
        kind: 'sigkill-producer',
        target: victim.id,
        plannedAtMs: plannedAt - startedAt,
        atMs: Date.now() - startedAt,
      });
      ctx.log(`  [${SCHEDULE_WEBHOOK_SCENARIO}] SIGKILL producer ${victim.id}`);
      continue;
    }
    const workers = fleet.serving();
    const victim = workers[Math.floor(pick * workers.length)];
    if (!victim) continue;
    await fleet.kill(victim);
    const replacement = fleet.spawn(victim.slot);
    injected.push({
      kind: 'sigkill-worker',
      target: victim.id,
      plannedAtMs: plannedAt - startedAt,
      atMs: Date.now() - startedAt,
    });
    ctx.log(`  [${SCHEDULE_WEBHOOK_SCENARIO}] SIGKILL worker ${victim.id} -> ${replacement.id}`);
  }
  await delay(Math.max(0, startedAt + options.windowMs - Date.now()));
  await Promise.all(starting);
  return injected;
}

/** Approves every pending action of the scenario's runs over HTTP, through a producer that serves, until stopped. */
function startDecider(ctx: ScenarioContext, producers: ChaosProducers) {
  const answers: Record<string, number> = {};
  const decided = new Set<string>();
  let posted = 0;
  let deciding = true;
  const loop = (async () => {
    while (deciding) {
      const pending = await pendingActions(ctx.db, SCHEDULE_WEBHOOK_SCENARIO).catch(() => []);
      for (const action of pending.filter((a) => !decided.has(a.action_id))) {
        const producer = producers.serving()[0];
        if (!producer) break;
        decided.add(action.action_id);
        const status = await postApproval({ ...ctx.api, baseUrl: producer.baseUrl }, action);
        posted += 1;
        answers[status] = (answers[status] ?? 0) + 1;
        if (status !== '200') decided.delete(action.action_id); // a producer killed meanwhile: again
      }
      await delay(300);
    }
  })();
  return {
    stop: async () => {
      deciding = false;
      await loop;
      return { posted, answers };
    },
  };
}

/** Waits until `remaining()` is 0; false once it has not gone down for `stallMs`. */
async function settled(
  ctx: ScenarioContext,
  what: string,
  remaining: () => Promise<number>,
  stallMs: number,
): Promise<boolean> {
  let best = Infinity;
  let deadline = Date.now() + stallMs;
  let lastLog = Date.now();
  for (;;) {
    const left = await remaining().catch(() => best);
    if (left === 0) return true;
    if (left < best) {
      best = left;
      deadline = Date.now() + stallMs;
    }
    if (Date.now() > deadline) {
      ctx.log(`  [${SCHEDULE_WEBHOOK_SCENARIO}] gave up waiting: ${left} ${what} left`);
      return false;
    }
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      ctx.log(`  [${SCHEDULE_WEBHOOK_SCENARIO}] waiting: ${left} ${what} left`);
    }
    await delay(300);
  }
}
