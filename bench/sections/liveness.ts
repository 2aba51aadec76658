import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { openRedisLivenessProbe, RunQueue } from '@cairn/queue';
import { notRunFigure, ratioFigure, medianFigure, type Figure } from '../lib/figure.js';
import type { Section } from '../lib/section.js';
import { sleep } from '../lib/timing.js';

const ID = 'liveness';
/** The fleet sizes compared: the tests' and a large fleet's. */
const SIZES = [3, 100] as const;
/** The watch's poll: one census per 50 ms while a worker is the watcher (worker-liveness.ts). */
const POLL_MS = 50;
const ROUND_MS = 1_000;

/** Total `usec` per command in an `INFO commandstats` reply (INFO itself left out). */
function commandUsec(info: string): Map<string, number> {
  const usec = new Map<string, number>();
  for (const [, name, value] of info.matchAll(/^cmdstat_(\S+?):calls=\d+,usec=(\d+)/gm))
    if (name !== 'info') usec.set(name!, Number(value));
  return usec;
}

/** Redis's own CPU so far (user + system), ms. */
function redisCpuMs(info: string): number {
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1]);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
}

interface Round {
  /** The census commands' time inside Redis (commandstats), µs per second. */
  commandUsecPerS: number;
  /** Redis's CPU (replies written included) above an idle second's just before, ms per second. */
  redisCpuMsPerS: number;
  /** This process's CPU (the watcher's side of the census: sending, reading, parsing), ms per second. */
  watcherCpuMsPerS: number;
  perCommand: Record<string, number>;
}

/** One second of a watcher's census at the watch's pace, with the fleet's members idle. */
async function measureRound(admin: Redis, census: () => Promise<unknown>): Promise<Round> {
  const idle0 = redisCpuMs(await admin.info('cpu'));
  await sleep(ROUND_MS);
  const idleMsPerS = (redisCpuMs(await admin.info('cpu')) - idle0) / (ROUND_MS / 1000);
  const [stats0, cpu0] = [commandUsec(await admin.info('commandstats')), await admin.info('cpu')];
  const start = performance.now();
  const own0 = process.cpuUsage();
  while (performance.now() - start < ROUND_MS) {
    const polled = performance.now();
    await census();
    await sleep(Math.max(0, POLL_MS - (performance.now() - polled)));
  }
  const own = process.cpuUsage(own0);
  const seconds = (performance.now() - start) / 1000;
  const [stats1, cpu1] = [commandUsec(await admin.info('commandstats')), await admin.info('cpu')];
  const perCommand: Record<string, number> = {};
  for (const [name, usec] of stats1) {
    const delta = usec - (stats0.get(name) ?? 0);
    if (delta > 0) perCommand[name] = delta / seconds;
  }
  return {
    commandUsecPerS: Object.values(perCommand).reduce((a, b) => a + b, 0),
    redisCpuMsPerS: (redisCpuMs(cpu1) - redisCpuMs(cpu0)) / seconds - idleMsPerS,
    watcherCpuMsPerS: (own.user + own.system) / 1000 / seconds,
    perCommand,
  };
}

/**
 * Measures the death signal's census on Redis for a fleet of `size` workers:
 * each member a BullMQ worker (idle) with its liveness probe open (its named
 * connection and its listing); one of them looks as the watcher does.
 */
async function measureFleet(
  url: string,
  size: number,
  rounds: number,
): Promise<{ rounds: Round[]; clients: number }> {
  const runQueue = await RunQueue.open({
    backend: 'redis',
    redisUrl: url,
    queueName: `bench-liveness-${size}-${randomUUID()}`,
  });
  const connections: Redis[] = [];
  const connect = (connectionName?: string) => {
    const redis = new Redis(url, {
      maxRetriesPerRequest: null,
      ...(connectionName && { connectionName }),
    });
    connections.push(redis);
    return redis;
  };
  const admin = connect();
  try {
    const probes = [];
    const workers = [];
    for (let i = 0; i < size; i++) {
      const worker = runQueue.createWorker(async () => undefined, {
        autorun: false,
        name: `m${i}`,
      });
      workers.push(worker);
      probes.push(await openRedisLivenessProbe(worker, connect));
    }
    const watcher = probes[0]!;
    const clients = Number(/^connected_clients:(\d+)/m.exec(await admin.info('clients'))?.[1]);
    await measureRound(admin, () => watcher.census());
    const measured: Round[] = [];
    for (let i = 0; i < rounds; i++)
      measured.push(await measureRound(admin, () => watcher.census()));
    for (const probe of probes) await probe.close();
    for (const worker of workers) await worker.close();
    return { rounds: measured, clients };
  } finally {
    for (const redis of connections) redis.disconnect();
    await runQueue.close();
  }
}

/**
 * The death signal's census on Redis (worker-liveness.ts): what one look of
 * the fleet's watcher costs Redis and the watcher, with a fleet of 3 and of
 * 100 workers; the watcher looks 20 times a second whatever the fleet's size,
 * so the goal is a flat cost (100 workers / 3 workers).
 */
export const livenessSection: Section = {
  id: ID,
  title: "Death signal: the watcher's census cost by fleet size (Redis)",
  cairn: true,
  async run({ quick, services, log }) {
    const url = await services.redisUrl();
    if (!url)
      return {
        figures: [notRunFigure(ID, 'census Redis CPU, 100 / 3 workers', 'no Redis')],
        notes: [],
      };
    const rounds = quick ? 5 : 20;
    const results = new Map<number, { rounds: Round[]; clients: number }>();
    for (const size of SIZES) {
      log(`fleet of ${size}: ${rounds} rounds of ${ROUND_MS} ms`);
      results.set(size, await measureFleet(url, size, rounds));
    }
    const figures: Figure[] = [];
    const series = (size: number, pick: (round: Round) => number) =>
      results.get(size)!.rounds.map(pick);
    for (const size of SIZES) {
      figures.push(
        medianFigure(
          ID,
          `census time in Redis, ${size} workers`,
          series(size, (r) => r.commandUsecPerS),
          'µs/s',
        ),
        medianFigure(
          ID,
          `Redis CPU during the census, ${size} workers`,
          series(size, (r) => r.redisCpuMsPerS),
          'ms/s',
        ),
        medianFigure(
          ID,
          `watcher CPU for the census, ${size} workers`,
          series(size, (r) => r.watcherCpuMsPerS),
          'ms/s',
        ),
      );
    }
    const [small, large] = SIZES;
    const ratio = (name: string, pick: (round: Round) => number) =>
      ratioFigure(
        ID,
        `${name}, ${large} / ${small} workers`,
        series(large, pick),
        series(small, pick),
        {
          goal: { op: '<=', bound: 1.5 },
        },
      );
    figures.push(
      ratio('census time in Redis', (r) => r.commandUsecPerS),
      ratio('watcher CPU for the census', (r) => r.watcherCpuMsPerS),
    );
    return {
      figures,
      notes: [
        `each member: an idle BullMQ worker of the queue with its liveness probe open; the watcher looks every ${POLL_MS} ms (20 a second), one look at a time, for ${ROUND_MS} ms a round`,
        ...SIZES.map(
          (size) => `${size} workers: ${results.get(size)!.clients} Redis connections open`,
        ),
        "census time in Redis: the commands the looks ran, from INFO commandstats (a reply written to the socket is not in it); Redis CPU: the server's (INFO cpu) during the looks less an idle second's just before",
      ],
      details: Object.fromEntries(
        SIZES.map((size) => [size, results.get(size)!.rounds.map((r) => r.perCommand)]),
      ),
    };
  },
};
