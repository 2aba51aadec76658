import { FigureSink } from '../lib/attempt.js';
import { runChild } from '../lib/child.js';
import {
  medianFigure,
  notRunFigure,
  ratioFigure,
  valueFigure,
  fmt,
  type Figure,
} from '../lib/figure.js';
import type { PeerConfig, PeerResult } from '../lib/peer-harness.js';
import { ensurePeersInstalled } from '../lib/peers-install.js';
import type { Section } from '../lib/section.js';
import { median, summarize } from '../lib/stats.js';

const ID = 'peers';

interface Peer {
  system: string;
  label: string;
  script: string;
  /** Needs bench/peers installed. */
  external: boolean;
}

const PEERS: readonly Peer[] = [
  {
    system: 'cairn',
    label: 'Cairn (Engine + store, no queue)',
    script: 'bench/children/cairn-workload.ts',
    external: false,
  },
  {
    system: 'dbos',
    label: 'DBOS Transact',
    script: 'bench/peers/src/dbos-workload.ts',
    external: true,
  },
  {
    system: 'langgraph',
    label: 'LangGraph JS + PostgresSaver',
    script: 'bench/peers/src/langgraph-workload.ts',
    external: true,
  },
];

function figureNames(label: string, sizes: readonly number[]): string[] {
  return [
    `${label}: runs/s`,
    `${label}: checkpoint write`,
    `${label}: WAL per checkpoint`,
    `${label}: WAL per run`,
    `${label}: write transactions per run`,
    ...sizes.map((size) => `${label}: WAL per checkpoint @ ${size} messages`),
  ];
}

function peerFigures(label: string, results: readonly PeerResult[]): Figure[] {
  const rates = results.flatMap((r) => r.runsPerSecond);
  const rate = summarize(rates);
  const checkpoints = results.flatMap((r) => r.checkpoints);
  const serial = results.flatMap((r) => r.serial);
  const figures = [
    valueFigure(
      ID,
      `${label}: runs/s`,
      rate.median,
      'runs/s',
      rate.n,
      `rounds min..max ${fmt(rate.min)}..${fmt(rate.max)}`,
      { stats: rate },
    ),
    medianFigure(
      ID,
      `${label}: checkpoint write`,
      checkpoints.map((c) => c.ms),
      'ms',
    ),
    medianFigure(
      ID,
      `${label}: WAL per checkpoint`,
      checkpoints.map((c) => c.walBytes),
      'B',
    ),
    medianFigure(
      ID,
      `${label}: WAL per run`,
      serial.map((s) => s.walBytes),
      'B',
    ),
    medianFigure(
      ID,
      `${label}: write transactions per run`,
      serial.map((s) => s.writeTx),
      'tx',
    ),
  ];
  const secondary = results.flatMap((r) => r.secondaryWrites ?? []);
  if (secondary.length > 0) {
    figures.push(
      medianFigure(
        ID,
        `${label}: putWrites`,
        secondary.map((c) => c.ms),
        'ms',
      ),
    );
    figures.push(
      medianFigure(
        ID,
        `${label}: WAL per putWrites`,
        secondary.map((c) => c.walBytes),
        'B',
      ),
    );
  }
  for (const { size } of results[0]?.growth ?? []) {
    const samples = results.flatMap((r) => r.growth.find((g) => g.size === size)?.samples ?? []);
    figures.push(
      medianFigure(
        ID,
        `${label}: WAL per checkpoint @ ${size} messages`,
        samples.map((s) => s.walBytes),
        'B',
      ),
    );
  }
  return figures;
}

/** The two goals against DBOS: Cairn's runs/s at least 1.5 times, its WAL per run at most 1.2 times. */
function versusDbos(results: ReadonlyMap<string, PeerResult[]>): Figure[] {
  const cairn = results.get('cairn');
  const dbos = results.get('dbos');
  const rateName = 'runs/s, cairn / dbos';
  const walName = 'WAL per run, cairn / dbos';
  const rateGoal = { op: '>=', bound: 1.5 } as const;
  const walGoal = { op: '<=', bound: 1.2 } as const;
  if (!cairn || !dbos) {
    const reason = `${cairn ? 'DBOS' : 'Cairn'} did not run`;
    return [
      notRunFigure(ID, rateName, reason, rateGoal),
      notRunFigure(ID, walName, reason, walGoal),
    ];
  }
  const rates = (r: PeerResult[]) => r.flatMap((x) => x.runsPerSecond);
  const wal = (r: PeerResult[]) => r.flatMap((x) => x.serial.map((s) => s.walBytes));
  return [
    ratioFigure(ID, rateName, rates(cairn), rates(dbos), { goal: rateGoal }),
    ratioFigure(ID, walName, wal(cairn), wal(dbos), { goal: walGoal }),
  ];
}

/** Section 4 (issue item 5): the same 3-batch workload on Cairn, DBOS and LangGraph, same Postgres. */
export const peersSection: Section = {
  id: ID,
  title: 'Peers, same Postgres, same workload',
  cairn: false,
  async run({ quick, services, log }) {
    const config: PeerConfig = {
      runs: quick ? 30 : 200,
      concurrency: 10,
      rounds: quick ? 1 : 3,
      serialRuns: quick ? 3 : 20,
      historySizes: quick ? [10, 1000] : [10, 100, 1000, 5000],
      growthReps: quick ? 2 : 10,
    };
    const missing = await ensurePeersInstalled(log);
    const sink = new FigureSink(ID, log);
    // full runs take two passes in opposite orders, so drift on a shared machine hits every system alike
    const passes = quick ? [PEERS] : [PEERS, [...PEERS].reverse()];
    const results = new Map<string, PeerResult[]>();
    const failures = new Map<string, string>();
    for (const pass of passes) {
      for (const peer of pass) {
        if (failures.has(peer.system)) continue;
        if (peer.external && missing) {
          failures.set(peer.system, missing);
          continue;
        }
        log(
          `${peer.label}: ${config.rounds} x ${config.runs} runs at concurrency ${config.concurrency}, ${config.serialRuns} serial runs, history ${config.historySizes.join('/')}`,
        );
        try {
          const database = await services.database(`peer_${peer.system}`);
          const result = await runChild<PeerResult>(peer.script, {
            args: [JSON.stringify(config)],
            env: { DATABASE_URL: database.url },
          });
          results.set(peer.system, [...(results.get(peer.system) ?? []), result]);
        } catch (error) {
          failures.set(peer.system, error instanceof Error ? error.message : String(error));
        }
      }
    }
    for (const peer of PEERS) {
      const got = results.get(peer.system);
      const failure = failures.get(peer.system);
      await sink.part(figureNames(peer.label, config.historySizes), async () => {
        if (failure || !got) throw new Error(failure ?? 'no result');
        sink.figures.push(...peerFigures(peer.label, got));
        sink.notes.push(...(got[0]?.notes ?? []).map((n) => `${peer.system}: ${n}`));
      });
    }
    const cairnRate = median(results.get('cairn')?.flatMap((r) => r.runsPerSecond) ?? []);
    for (const peer of PEERS.slice(1)) {
      const rate = median(results.get(peer.system)?.flatMap((r) => r.runsPerSecond) ?? []);
      if (Number.isFinite(rate) && Number.isFinite(cairnRate))
        sink.notes.push(`runs/s, ${peer.system} / cairn: ${fmt(rate / cairnRate)}`);
    }
    sink.figures.push(...versusDbos(results));
    sink.notes.push(
      `workload: ${config.concurrency} runs in flight, each 3 tool batches of 3 no-op calls and a final answer, scripted model, no queue; WAL and write transactions measured one run (or one write) at a time with nothing else writing`,
    );
    // a peer that cannot run is reported, never a failure of the benchmark; Cairn's own failure is
    return {
      figures: sink.figures,
      notes: sink.notes,
      failed: failures.has('cairn') ? [`cairn: ${failures.get('cairn')}`] : [],
    };
  },
};
