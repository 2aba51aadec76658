import { cpus, loadavg } from 'node:os';
import { FigureSink } from '../lib/attempt.js';
import {
  redisPermitOverhead,
  postgresPermitOverhead,
  type PermitOverhead,
} from '../lib/capacity-overhead.js';
import {
  capacityPickups,
  parkDelays,
  queueWaits,
  slowRunSplits,
  readOutcomes,
  startCapacityFleet,
  submitEvery,
  waitAllTerminal,
  windowShares,
  type RunOutcome,
} from '../lib/capacity-fleet.js';
import {
  ADAPTIVE_QUOTA,
  adaptiveFlood,
  flood,
  FULL,
  LATENCY_MS,
  LIGHT_EVERY_MS,
  MODELS,
  QUICK,
  QUOTA,
  WORKER_CONCURRENCY,
  WORKERS,
  type Plan,
} from '../lib/capacity-phases.js';
import { fmt, medianFigure, ratioFigure, valueFigure } from '../lib/figure.js';
import { executionMode } from '../lib/fleet.js';
import type { QueueTarget } from '../lib/producer.js';
import type { Section, SectionContext } from '../lib/section.js';
import { summarize } from '../lib/stats.js';

const ID = 'capacity';
const pct = (part: number, whole: number) => (whole > 0 ? (100 * part) / whole : 0);

/** The figures of one limiter's permit overhead: permit p50 (goal), its baseline, and their paired ratio. */
function overheadFigures(sink: FigureSink, backend: string, o: PermitOverhead, baseline: string) {
  sink.figures.push(
    medianFigure(ID, `permit round trip (tryAcquire + release), ${backend}`, o.permit, 'ms', {
      goal: { op: '<=', bound: 1 },
    }),
    medianFigure(ID, `baseline: two ${baseline}, ${backend}`, o.baseline, 'ms'),
    ratioFigure(ID, `permit / two ${baseline}, ${backend}`, o.permit, o.baseline),
  );
  sink.notes.push(
    `permit on ${backend}: tryAcquire median ${fmt(summarize(o.acquire).median)} ms, release median ${fmt(summarize(o.release).median)} ms`,
  );
}

/** Samples the 1-minute load average every 5 s until stopped. */
function watchLoad(): { stop(): number[] } {
  const samples = [loadavg()[0] ?? 0];
  const timer = setInterval(() => samples.push(loadavg()[0] ?? 0), 5_000);
  return {
    stop: () => {
      clearInterval(timer);
      samples.push(loadavg()[0] ?? 0);
      return samples;
    },
  };
}

const completed = (outcomes: RunOutcome[]) =>
  outcomes.filter((o) => o.status === 'COMPLETED').map((o) => o.ms);

async function fleetParts(context: SectionContext, sink: FigureSink, plan: Plan): Promise<void> {
  const { services, log } = context;
  const redisUrl = await services.redisUrl();
  const backend = redisUrl ? 'redis' : 'postgres';
  const database = await services.database(`${ID}_fleet`);
  const target: QueueTarget = {
    databaseUrl: database.url,
    backend,
    redisUrl,
    queueName: `bench-cap-${Date.now()}`,
  };
  const names = {
    configured429: `429s with the limit configured = quota, % of requests (${backend})`,
    quotaUse: 'quota used while a backlog waits, accepted / quota requests per minute',
    fairness: "light tenant's p95 completion during the flood / alone",
    free: 'free-model run during the flood, worst time - its median alone',
    adaptive429: '429s after the fleet learned the limit (no limit configured), % of requests',
    failed: 'runs failed by rate limiting (incl. a storm: quota halved mid-run)',
  };
  log(
    `starting the fake OpenAI server and ${WORKERS} workers x WORKER_CONCURRENCY=${WORKER_CONCURRENCY} on ${backend}`,
  );
  const load = watchLoad();
  const fleet = await startCapacityFleet({
    target,
    workers: WORKERS,
    concurrency: WORKER_CONCURRENCY,
    models: Object.values(MODELS),
    quota: { [MODELS.limited]: QUOTA, [MODELS.alone]: QUOTA, [MODELS.adaptive]: ADAPTIVE_QUOTA },
    latencyMs: LATENCY_MS,
    limits: { [MODELS.limited]: QUOTA, [MODELS.alone]: QUOTA },
  });
  const all: string[] = [];
  try {
    log(
      `alone: tenant light every ${LIGHT_EVERY_MS} ms on ${MODELS.alone}, a free-model run every 3 s, ${plan.aloneMs / 1000} s`,
    );
    const aloneEnd = Date.now() + plan.aloneMs;
    const [lightAlone, freeAlone] = await Promise.all([
      submitEvery(fleet.client, LIGHT_EVERY_MS, MODELS.alone, 'light', () => Date.now() < aloneEnd),
      submitEvery(fleet.client, 3_000, MODELS.free, 'other', () => Date.now() < aloneEnd),
    ]);
    all.push(...lightAlone, ...freeAlone);
    await waitAllTerminal(fleet.pool, [...lightAlone, ...freeAlone], 60_000);

    const f = await flood(context, fleet, target, plan);
    all.push(...f.heavy, ...f.light, ...f.free);
    const a = await adaptiveFlood(context, fleet, plan);
    all.push(...a.ids);

    // 429s with the configured limit, over the saturated period (before the storm).
    const sent = f.storm.accepted - f.start.accepted + (f.storm.rejected - f.start.rejected);
    const refused = f.storm.rejected - f.start.rejected;
    sink.figures.push(
      valueFigure(
        ID,
        names.configured429,
        pct(refused, sent),
        '%',
        sent,
        `${refused} of ${sent} requests`,
        {
          goal: { op: '<=', bound: 0 },
        },
      ),
    );

    // Quota use over the saturated period: sliding 60 s windows of accepted receipts.
    const acceptedAt = fleet.server.quota.acceptedAt(MODELS.limited);
    const shares = windowShares(acceptedAt, f.start.at, f.storm.at, QUOTA.requestsPerMinute);
    const periodS = (f.storm.at - f.start.at) / 1000;
    if (shares.length > 0) {
      const s = summarize(shares.map((x) => 100 * x));
      sink.figures.push(
        valueFigure(
          ID,
          names.quotaUse,
          s.mean,
          '%',
          s.n,
          `60 s windows sliding by 1 s over ${fmt(periodS)} s: min..max ${fmt(s.min)}..${fmt(s.max)}`,
          {
            goal: { op: '>=', bound: 90 },
            stats: s,
          },
        ),
      );
    } else {
      const accepted = f.storm.accepted - f.start.accepted;
      sink.figures.push(
        valueFigure(
          ID,
          `quota used in the first ${fmt(periodS)} s of the flood (--quick: shorter than the 60 s window, so no goal)`,
          pct(accepted, (QUOTA.requestsPerMinute * periodS) / 60),
          '%',
          accepted,
          `${accepted} accepted in ${fmt(periodS)} s from an empty window; the quota allows ${QUOTA.requestsPerMinute} in any 60 s`,
        ),
      );
    }

    // Fairness: the light tenant's completion times, alone and during the flood.
    const lightAloneMs = completed(await readOutcomes(fleet.pool, lightAlone));
    const lightFloodMs = completed(await readOutcomes(fleet.pool, f.light));
    const alone95 = summarize(lightAloneMs).p95;
    const flood95 = summarize(lightFloodMs).p95;
    sink.figures.push(
      medianFigure(ID, "light tenant's completion time alone", lightAloneMs, 'ms'),
      medianFigure(ID, "light tenant's completion time during the flood", lightFloodMs, 'ms'),
      valueFigure(
        ID,
        names.fairness,
        flood95 / alone95,
        'x',
        lightFloodMs.length,
        `p95 ${fmt(flood95)} ms during, ${fmt(alone95)} ms alone (${lightAloneMs.length} runs)`,
        {
          goal: { op: '<=', bound: 1.5 },
        },
      ),
    );

    // A free-model run is not held back by the runs waiting for the limited model.
    const freeAloneMs = completed(await readOutcomes(fleet.pool, freeAlone));
    const freeFloodMs = completed(await readOutcomes(fleet.pool, f.free));
    const freeAloneMedian = summarize(freeAloneMs).median;
    const freeWorst = Math.max(...freeFloodMs);
    sink.figures.push(
      valueFigure(
        ID,
        names.free,
        freeWorst - freeAloneMedian,
        'ms',
        freeFloodMs.length,
        `during: median ${fmt(summarize(freeFloodMs).median)}, max ${fmt(freeWorst)} ms; alone: median ${fmt(freeAloneMedian)} ms (${freeAloneMs.length} runs)`,
        {
          goal: { op: '<=', bound: 1000 },
        },
      ),
    );

    // 429s while the fleet learns a concurrency quota it was not told.
    const aSent = a.end.accepted - a.learned.accepted + (a.end.rejected - a.learned.rejected);
    const aRefused = a.end.rejected - a.learned.rejected;
    const aAll = a.end.accepted - a.start.accepted + (a.end.rejected - a.start.rejected);
    const aAllRefused = a.end.rejected - a.start.rejected;
    sink.figures.push(
      valueFigure(
        ID,
        names.adaptive429,
        pct(aRefused, aSent),
        '%',
        aSent,
        `${aRefused} of ${aSent} requests from ${plan.learnMs / 1000} s after the first 429 to the end (${fmt((a.end.at - a.learned.at) / 1000)} s); whole flood ${aAllRefused} of ${aAll} (${fmt(pct(aAllRefused, aAll))} %)`,
        {
          goal: { op: '<=', bound: 1 },
        },
      ),
    );

    // Runs failed by rate limiting, in every phase, storm included.
    const outcomes = await readOutcomes(fleet.pool, all);
    const failed = outcomes.filter((o) => o.status === 'ERROR');
    const stormSent = f.end.accepted - f.storm.accepted + (f.end.rejected - f.storm.rejected);
    const stormRefused = f.end.rejected - f.storm.rejected;
    sink.figures.push(
      valueFigure(
        ID,
        names.failed,
        failed.length,
        'runs',
        outcomes.length,
        `${failed.length} of ${outcomes.length} runs ERROR; ${f.cancelled + a.cancelled} leftover backlog runs cancelled at the end; storm: ${stormRefused} of ${stormSent} requests got a 429`,
        {
          goal: { op: '<=', bound: 0 },
        },
      ),
    );
    const held = f.rejections.map(
      (r) => `${fmt((r.at - f.start.at) / 1000)} s in, window held ${r.windowHeld}`,
    );
    // Grant (limiter) to receipt (server) of each request, paired in order over the saturated period.
    const grants = f.limiter.grants.filter((t) => t >= f.start.at && t <= f.storm.at);
    const receipts = acceptedAt.filter((t) => t >= f.start.at && t <= f.storm.at);
    const lags = grants.slice(0, receipts.length).map((g, i) => receipts[i]! - g);
    if (lags.length > 0) {
      const l = summarize(lags);
      sink.notes.push(
        `grant to receipt (the limiter's grant time in its window, the server's receipt time; ${lags.length} requests paired in order): median ${fmt(l.median)} ms, p95 ${fmt(l.p95)}, max ${fmt(l.max)}; ${lags.filter((x) => x > 250).length} over the limiter's 250 ms window margin`,
      );
    }
    sink.notes.push(
      `429s of ${MODELS.limited} in the saturated period, as the server's ledger showed each (its 60 s window's accepted requests then, quota ${QUOTA.requestsPerMinute}): ${held.join('; ') || 'none'}`,
    );
    if (f.unended > 0)
      sink.notes.push(
        `${f.unended} light and free-model runs of the flood had not ended 30 s after the last one came, when the storm began: their times include it`,
      );
    if (failed.length > 0) sink.notes.push(`first failed run: ${failed[0]!.error}`);
    const parks = await capacityPickups(fleet.pool, all);
    const parkLine = async (ids: string[]) => {
      const d = summarize(await parkDelays(fleet.pool, ids));
      if (d.n === 0) return `0 parks (${ids.length} runs)`;
      return `${d.n} parks (${fmt(d.n / ids.length)} per run), delay median ${fmt(d.median)} ms, p95 ${fmt(d.p95)}, max ${fmt(d.max)}`;
    };
    const waits = async (ids: string[]) => fmt(summarize(await queueWaits(fleet.pool, ids)).median);
    const inFlight = summarize(f.limiter.inFlight);
    const waiting = summarize(f.limiter.waiting);
    sink.notes.push(
      `limiter's view of ${MODELS.limited} over the saturated period (${f.limiter.inFlight.length} snapshots every 0.5 s): in flight mean ${fmt(inFlight.mean)} of the cap ${QUOTA.concurrency} (median ${fmt(inFlight.median)}), runs in line mean ${fmt(waiting.mean)}; ${fmt((f.storm.accepted - f.start.accepted) / ((f.storm.at - f.start.at) / 1000))} requests/s accepted, so each held its slot about ${fmt((1000 * inFlight.mean * (f.storm.at - f.start.at)) / 1000 / Math.max(1, f.storm.accepted - f.start.accepted))} ms (the server answers in ${LATENCY_MS} ms)`,
      `parks (CapacityWait of a parked run; its job is delayed by the limiter's retry-after): heavy runs of the flood ${await parkLine(f.heavy)}; light runs of the flood ${await parkLine(f.light)}; adaptive flood ${await parkLine(a.ids)}`,
      `worker slots (${WORKERS * WORKER_CONCURRENCY}) over the saturated period: ${fmt(pct(f.slots.allMs, WORKERS * WORKER_CONCURRENCY * (f.storm.at - f.start.at)))} % busy with the flood's runs, ${fmt(pct(f.slots.parkedMs, WORKERS * WORKER_CONCURRENCY * (f.storm.at - f.start.at)))} % in attempts that ended parked (waiting for a permit, up to the 1 s capacity wait, then parking): ${f.slots.parkedFirst.count} first pickups (reason run), mean ${fmt(f.slots.parkedFirst.ms / Math.max(1, f.slots.parkedFirst.count))} ms each, and ${f.slots.parkedAgain.count} pickups back from a park (reason capacity), mean ${fmt(f.slots.parkedAgain.ms / Math.max(1, f.slots.parkedAgain.count))} ms each`,
      `cores used over the saturated period: ${Object.entries(f.cores)
        .map(([role, n]) => `${role} ${fmt(n)}`)
        .join(', ')} (machine: every process on it, others' jobs included, of ${cpus().length})`,
      `heavy runs at the storm: ${f.heavyProgress.completed} completed, ${f.heavyProgress.midway} past their first turn and not ended, ${f.heavyProgress.notStarted} not past it`,
      `queue wait (creation to first pickup), median ms: light runs alone ${await waits(lightAlone)}, during the flood ${await waits(f.light)}; free-model runs alone ${await waits(freeAlone)}, during the flood ${await waits(f.free)}`,
      `light runs of the flood slower than the p95 alone (${fmt(alone95)} ms), slowest first, total = queue wait + permit waits + the rest (ms): ${
        (await slowRunSplits(fleet.pool, f.light, alone95))
          .map(
            (r) =>
              `${fmt(r.totalMs)} = ${fmt(r.queueMs)} + ${fmt(r.permitMs)} + ${fmt(r.totalMs - r.queueMs - r.permitMs)}${r.parks > 0 ? ` (${r.parks} parks)` : ''}${r.attempts > 1 ? ` (${r.attempts} attempts)` : ''}`,
          )
          .join('; ') || 'none'
      }`,
    );
    const loads = load.stop();
    sink.notes.push(
      `fleet: ${WORKERS} worker processes x WORKER_CONCURRENCY=${WORKER_CONCURRENCY} on ${backend} (the issue's setup), ${executionMode()}, CAIRN_CAPACITY_WAIT_MS default (1000); fake OpenAI server in the bench process answering each request after ${LATENCY_MS} ms; each run 2 model requests (a tool call, then the answer) around one checkpointed no-op tool batch`,
      `quota of ${MODELS.limited} (and ${MODELS.alone}): concurrency ${QUOTA.concurrency}, ${QUOTA.requestsPerMinute} requests and ${QUOTA.tokensPerMinute} tokens per minute (sliding 60 s window on the server), CAIRN_MODEL_LIMITS the same; ${MODELS.adaptive}: concurrency ${ADAPTIVE_QUOTA.concurrency} on the server, no limit configured; ${MODELS.free}: neither`,
      `flood: ${f.heavy.length} heavy runs submitted at once, ${f.light.length} light runs one per ${LIGHT_EVERY_MS / 1000} s and ${f.free.length} free-model runs alongside; saturated period ${fmt(periodS)} s (${f.storm.accepted - f.start.accepted} accepted); storm ${plan.stormMs / 1000} s at half quota, then ${f.cancelled} heavy runs left were cancelled; adaptive flood ${a.ids.length} runs (first 429 ${a.first === undefined ? 'never' : `${fmt((a.first - a.start.at) / 1000)} s in`}, ${a.cancelled} cancelled at its end)`,
      `runs picked up again after parking for capacity (attempt reason capacity): ${parks}`,
      `load average (1 min) during the fleet part: ${fmt(Math.min(...loads))}..${fmt(Math.max(...loads))} on ${cpus().length} cores`,
    );
  } finally {
    load.stop();
    await fleet.close();
  }
}

/** Issue #19's figures: model capacity against a provider-like quota, with worker processes, and the limiters' permit cost in process. */
export const capacitySection: Section = {
  id: ID,
  title: 'Model capacity',
  cairn: true,
  async run(context) {
    const plan = context.quick ? QUICK : FULL;
    const sink = new FigureSink(ID, context.log);
    const redisUrl = await context.services.redisUrl();
    const warmup = Math.min(200, plan.overheadRounds / 2);
    if (redisUrl) {
      await sink.part(['permit round trip (tryAcquire + release), redis'], async () => {
        context.log(`permit overhead on Redis: ${plan.overheadRounds} rounds`);
        overheadFigures(
          sink,
          'redis',
          await redisPermitOverhead(redisUrl, plan.overheadRounds, warmup),
          'PINGs',
        );
      });
    } else sink.notes.push('no redis-server binary and no REDIS_URL: Redis limiter not measured');
    await sink.part(['permit round trip (tryAcquire + release), postgres'], async () => {
      context.log(`permit overhead on Postgres: ${plan.overheadRounds} rounds`);
      const database = await context.services.database(`${ID}_overhead`);
      overheadFigures(
        sink,
        'postgres',
        await postgresPermitOverhead(database.url, plan.overheadRounds, warmup),
        '`select 1`',
      );
    });
    sink.notes.push(
      `permit overhead: in the bench process, directly on RedisModelCapacity and PostgresModelCapacity (one connection each), a model with every limit configured and capacity to spare (a fresh model every 250 permits, so a window holds at most 250 grants); each round times tryAcquire + release (two round trips), then the baseline (two PINGs, or two \`select 1\` through the same Kysely pool), alternated; ${Math.min(200, plan.overheadRounds / 2)} warm-up rounds`,
    );
    await sink.part(['fleet against the quota server'], () => fleetParts(context, sink, plan));
    return { figures: sink.figures, notes: sink.notes, failed: sink.failed };
  },
};
