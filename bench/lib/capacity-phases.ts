/**
 * The capacity benchmark's setup and phases: the fake server's models and
 * quota, the fleet's size, the plan of a full and a quick run, and the two
 * floods (the limited model's with its storm, the adaptive model's).
 */
import { isStatusIn, IDLE_STATUSES, type RunStatus } from '@cairn/engine';
import type { FakeModelQuota } from '@cairn/engine/testing';
import {
  attemptTime,
  cancelLeftovers,
  markLedger,
  readOutcomes,
  runProgress,
  sampleLimiter,
  startCoreAccounting,
  submitEvery,
  submitRuns,
  waitAllTerminal,
  watchRejections,
  type CapacityFleet,
  type LedgerMark,
  type LimiterSamples,
  type SeenRejection,
} from './capacity-fleet.js';
import type { QueueTarget } from './producer.js';
import type { SectionContext } from './section.js';
import { pollUntil, sleep } from './timing.js';

/** Model ids on the fake server. */
export const MODELS = {
  /** The model the heavy tenant floods; its limit is configured equal to its quota. */
  limited: 'gpt-limited',
  /** Same quota and limit as `limited`: the light tenant's runs alone, before the flood. */
  alone: 'gpt-alone',
  /** No quota, no limit. */
  free: 'gpt-free',
  /** A concurrency quota and no configured limit: the fleet learns it from 429s. */
  adaptive: 'gpt-adaptive',
} as const;

/** The example quota: 8 concurrent, 500 requests and 200,000 tokens per minute. */
export const QUOTA = { concurrency: 8, requestsPerMinute: 500, tokensPerMinute: 200_000 };
/** The adaptive model's quota: concurrency only (what a 429-halved cap learns). */
export const ADAPTIVE_QUOTA: FakeModelQuota = { concurrency: 8 };
/**
 * How long the fake server takes to answer: 8 concurrent at 400 ms allow
 * 1,200 requests a minute, so the 500 a minute bind (with room for the
 * fleet's own time per request on a loaded machine).
 */
export const LATENCY_MS = 400;
/** Model requests per run (a tool call, then the answer). */
const REQUESTS_PER_RUN = 2;
/** Worker processes of the fleet (the setup). */
export const WORKERS = 3;
/** `WORKER_CONCURRENCY` of each. */
export const WORKER_CONCURRENCY = 20;
/** The light tenant submits one run this often, alone and during the flood. */
export const LIGHT_EVERY_MS = 1_000;

/** How long each phase lasts, and how many permits the overhead part times. */
export interface Plan {
  overheadRounds: number;
  aloneMs: number;
  /** The flood's saturated period before the storm. */
  saturatedMs: number;
  stormMs: number;
  /** How long the adaptive flood is measured once learned. */
  adaptiveMs: number;
  freeEveryMs: number;
  /** Time left to the light and free runs of the flood before the storm (they stop arriving that early). */
  settleMs: number;
  /** 429s from this long after the adaptive flood's first one count as after learning. */
  learnMs: number;
}

/** A full run: the flood's saturated period spans more than one 60 s window. */
export const FULL: Plan = {
  overheadRounds: 2_000,
  aloneMs: 15_000,
  saturatedMs: 95_000,
  stormMs: 20_000,
  adaptiveMs: 30_000,
  freeEveryMs: 8_000,
  settleMs: 10_000,
  learnMs: 5_000,
};

/** `--quick`: the flood shorter than a window (its quota share then has no goal). */
export const QUICK: Plan = {
  overheadRounds: 300,
  aloneMs: 8_000,
  saturatedMs: 35_000,
  stormMs: 8_000,
  adaptiveMs: 10_000,
  freeEveryMs: 5_000,
  settleMs: 8_000,
  learnMs: 5_000,
};

/** What the flood phase measured. */
interface Flood {
  heavy: string[];
  light: string[];
  free: string[];
  /** Ledger of the limited model at the flood's start, at the storm and at the end. */
  start: LedgerMark;
  storm: LedgerMark;
  end: LedgerMark;
  cancelled: number;
  /** The limiter's view of the limited model over the saturated period. */
  limiter: LimiterSamples;
  /** How far the heavy runs got by the storm. */
  heavyProgress: Awaited<ReturnType<typeof runProgress>>;
  /** Worker-slot time of the flood's runs over the saturated period. */
  slots: Awaited<ReturnType<typeof attemptTime>>;
  /** Cores used over the saturated period, by role and by the whole machine. */
  cores: Record<string, number>;
  /** The limited model's 429s over the saturated period. */
  rejections: SeenRejection[];
  /** Light and free runs of the flood not ended when the storm began (0: all had). */
  unended: number;
}

/**
 * The heavy tenant floods the limited model (limit configured = quota) while
 * the light tenant keeps submitting runs and a run on the free model comes
 * now and then; then the provider halves its quota (the storm) and the
 * flood's leftover backlog is cancelled.
 */
export async function flood(
  context: SectionContext,
  fleet: CapacityFleet,
  target: QueueTarget,
  plan: Plan,
): Promise<Flood> {
  const { client, server } = fleet;
  // The heavy backlog: more than the quota lets through over the flood and the storm.
  const windows = Math.ceil((plan.saturatedMs + plan.stormMs) / 60_000);
  const capacityRequests = Math.min(
    QUOTA.requestsPerMinute * windows,
    (QUOTA.concurrency * (plan.saturatedMs + plan.stormMs)) / LATENCY_MS,
  );
  const heavyCount = Math.ceil((1.1 * capacityRequests) / REQUESTS_PER_RUN);
  const start = markLedger(server, MODELS.limited);
  const arrivalsEnd = start.at + plan.saturatedMs - plan.settleMs;
  context.log(
    `flood: tenant heavy submits ${heavyCount} runs on ${MODELS.limited}; light every ${LIGHT_EVERY_MS} ms, free every ${plan.freeEveryMs} ms, for ${(arrivalsEnd - start.at) / 1000} s`,
  );
  const more = () => Date.now() < arrivalsEnd;
  const sampler = sampleLimiter(target, MODELS.limited, 500);
  const rejectionWatch = watchRejections(server, MODELS.limited);
  const servers = await context.services.serverPids();
  const cpu = await startCoreAccounting({
    workers: { pids: fleet.workers.map((w) => w.pid) },
    postgres: { pids: servers.postgres ? [servers.postgres] : [], withChildren: true },
    redis: { pids: servers.redis ? [servers.redis] : [] },
    'bench process (fake server, producer)': { pids: [process.pid] },
  });
  const [heavy, light, free] = await Promise.all([
    submitRuns(client, heavyCount, MODELS.limited, 'heavy'),
    sleep(3_000).then(() => submitEvery(client, LIGHT_EVERY_MS, MODELS.limited, 'light', more)),
    sleep(3_000).then(() => submitEvery(client, plan.freeEveryMs, MODELS.free, 'other', more)),
  ]);
  // The light and free runs end before the storm (up to 30 s more if the flood holds them back;
  // past that the storm begins anyway and their times include it).
  const stormAt = start.at + plan.saturatedMs;
  const unended = await waitAllTerminal(
    fleet.pool,
    [...light, ...free],
    Math.max(30_000, stormAt - Date.now()),
  ).then(
    () => 0,
    async () =>
      (await readOutcomes(fleet.pool, [...light, ...free])).filter(
        (o) => !isStatusIn(o.status as RunStatus, IDLE_STATUSES),
      ).length,
  );
  await sleep(Math.max(0, stormAt - Date.now()));
  const storm = markLedger(server, MODELS.limited);
  const limiter = await sampler.stop();
  const rejections = rejectionWatch.stop();
  const cores = await cpu.stop();
  const heavyProgress = await runProgress(fleet.pool, heavy);
  const slots = await attemptTime(fleet.pool, [...heavy, ...light, ...free], start.at, storm.at);
  context.log(
    `storm: the provider halves ${MODELS.limited}'s quota for ${plan.stormMs / 1000} s (${storm.accepted - start.accepted} accepted, ${storm.rejected - start.rejected} refused so far)`,
  );
  server.setQuota(MODELS.limited, {
    concurrency: QUOTA.concurrency / 2,
    requestsPerMinute: QUOTA.requestsPerMinute / 2,
    tokensPerMinute: QUOTA.tokensPerMinute / 2,
  });
  await sleep(plan.stormMs);
  const end = markLedger(server, MODELS.limited);
  const cancelled = await cancelLeftovers(fleet, heavy);
  return {
    heavy,
    light,
    free,
    start,
    storm,
    end,
    cancelled,
    limiter,
    heavyProgress,
    slots,
    cores,
    rejections,
    unended,
  };
}

/**
 * The heavy tenant floods the adaptive model (no configured limit): ledger
 * marks at its start, `learnMs` after its first 429 (the fleet has learned)
 * and `adaptiveMs` after that.
 */
export async function adaptiveFlood(context: SectionContext, fleet: CapacityFleet, plan: Plan) {
  const { server } = fleet;
  // Enough runs to keep the model over its quota until the end: 60 % of what the quota would serve.
  const count = Math.ceil(
    (0.6 * ADAPTIVE_QUOTA.concurrency! * (plan.learnMs + plan.adaptiveMs + 10_000)) /
      LATENCY_MS /
      REQUESTS_PER_RUN,
  );
  context.log(`adaptive: tenant heavy submits ${count} runs on ${MODELS.adaptive} (no limit set)`);
  const start = markLedger(server, MODELS.adaptive);
  const ids = await submitRuns(fleet.client, count, MODELS.adaptive, 'heavy');
  const first = await pollUntil(
    'the first 429 of the adaptive model',
    () => Promise.resolve(server.quota.rejected(MODELS.adaptive) > 0 ? Date.now() : undefined),
    { timeoutMs: 30_000, everyMs: 20 },
  ).catch(() => undefined);
  await sleep(Math.max(0, (first ?? start.at) + plan.learnMs - Date.now()));
  const learned = markLedger(server, MODELS.adaptive);
  await sleep(plan.adaptiveMs);
  const end = markLedger(server, MODELS.adaptive);
  const cancelled = await cancelLeftovers(fleet, ids);
  return { ids, start, first, learned, end, cancelled };
}
