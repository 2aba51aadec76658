import { FigureSink } from '../lib/attempt.js';
import { runChild } from '../lib/child.js';
import {
  medianFigure,
  notRunFigure,
  ratioFigure,
  valueFigure,
  fmt,
  type Figure,
  type Goal,
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
  /** Extra environment of the workload process (a variant of the same script). */
  env?: Record<string, string>;
}

const PEERS: readonly Peer[] = [
  {
    system: 'cairn',
    label: 'Cairn (Engine + store, no queue)',
    script: 'bench/children/cairn-workload.ts',
    external: false,
  },
  {
    system: 'cairn-webhooks',
    label: 'Cairn, 3 webhook endpoints',
    script: 'bench/children/cairn-workload.ts',
    external: false,
    env: { BENCH_WEBHOOK_ENDPOINTS: '3' },
  },
  {
    system: 'dbos',
    label: 'DBOS Transact',
    script: 'bench/peers/src/dbos-workload.ts',
    external: true,
  },
  {
    system: 'dbos-model-steps',
    label: 'DBOS Transact, model turns as steps',
    script: 'bench/peers/src/dbos-workload.ts',
    external: true,
    env: { BENCH_DBOS_MODEL_STEPS: '1' },
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
    `${label}: WAL per run, steady state`,
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
  const steady = results.flatMap((r) => (r.steady ? [r.steady] : []));
  if (steady.length > 0) {
    const fpi = steady.flatMap((w) => (w.fpiBytesPerRun === undefined ? [] : [w.fpiBytesPerRun]));
    figures.push(
      medianFigure(
        ID,
        `${label}: WAL per run, steady state`,
        steady.map((w) => w.walBytesPerRun),
        'B',
        {
          note: `all WAL of ${steady[0]!.runs} runs (concurrency 10) right after a CHECKPOINT, per run: full-page images included${fpi.length > 0 ? `, of which ${fmt(median(fpi))} B per run` : ''}`,
        },
      ),
    );
  }
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

/** Each DBOS variant the goals compare Cairn with, and the goal bounds against it. */
const VERSUS: readonly {
  system: string;
  tag: string;
  rate: Goal;
  wal: Goal;
}[] = [
  // issue 29: as benched the model runs in the workflow body, so DBOS stores no model output
  { system: 'dbos', tag: 'dbos', rate: { op: '>=', bound: 1 }, wal: { op: '<=', bound: 1.3 } },
  {
    system: 'dbos-model-steps',
    tag: 'dbos with model steps',
    rate: { op: '>=', bound: 2 },
    wal: { op: '<=', bound: 1 },
  },
];

/** Issue 29's goals against both DBOS variants (runs/s, WAL per run between checkpoints), and the steady-state WAL ratio beside them. */
function versusDbos(results: ReadonlyMap<string, PeerResult[]>): Figure[] {
  const cairn = results.get('cairn');
  const rates = (r: PeerResult[]) => r.flatMap((x) => x.runsPerSecond);
  const wal = (r: PeerResult[]) => r.flatMap((x) => x.serial.map((s) => s.walBytes));
  const steady = (r: PeerResult[]) => r.flatMap((x) => (x.steady ? [x.steady.walBytesPerRun] : []));
  return VERSUS.flatMap(({ system, tag, rate, wal: walGoal }) => {
    const peer = results.get(system);
    const names = {
      rate: `runs/s, cairn / ${tag}`,
      wal: `WAL per run, cairn / ${tag}`,
      steady: `WAL per run, steady state, cairn / ${tag}`,
    };
    if (!cairn || !peer) {
      const reason = `${cairn ? system : 'cairn'} did not run`;
      return [
        notRunFigure(ID, names.rate, reason, rate),
        notRunFigure(ID, names.wal, reason, walGoal),
      ];
    }
    const figures = [
      ratioFigure(ID, names.rate, rates(cairn), rates(peer), { goal: rate, sides: 'runs/s' }),
      ratioFigure(ID, names.wal, wal(cairn), wal(peer), { goal: walGoal, sides: 'B' }),
    ];
    if (steady(cairn).length > 0 && steady(peer).length > 0)
      figures.push(ratioFigure(ID, names.steady, steady(cairn), steady(peer), { sides: 'B' }));
    return figures;
  });
}

/**
 * Issue 32's goal: a run's hot path with 3 webhook endpoints configured costs at most 1.05x one
 * without (WAL per run, write transactions per run; +1 outbox row per notified event).
 */
function webhooksVersusNone(results: ReadonlyMap<string, PeerResult[]>): Figure[] {
  const none = results.get('cairn');
  const three = results.get('cairn-webhooks');
  const goal: Goal = { op: '<=', bound: 1.05 };
  const names = {
    wal: 'WAL per run, 3 webhook endpoints / none',
    tx: 'write transactions per run, 3 webhook endpoints / none',
    statements: 'statements per run, 3 webhook endpoints / none',
  };
  if (!none || !three) {
    const reason = `${none ? 'cairn-webhooks' : 'cairn'} did not run`;
    return Object.values(names).map((name) => notRunFigure(ID, name, reason, goal));
  }
  const wal = (r: PeerResult[]) => r.flatMap((x) => x.serial.map((s) => s.walBytes));
  const tx = (r: PeerResult[]) => r.flatMap((x) => x.serial.map((s) => s.writeTx));
  const statements = (r: PeerResult[]) => r.flatMap((x) => x.statementsPerRun ?? []);
  return [
    ratioFigure(ID, names.wal, wal(three), wal(none), { goal, sides: 'B' }),
    ratioFigure(ID, names.tx, tx(three), tx(none), { goal, sides: 'tx' }),
    ratioFigure(ID, names.statements, statements(three), statements(none), {
      goal,
      sides: 'statements',
    }),
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
      steadyRuns: quick ? 200 : 1000,
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
            env: { DATABASE_URL: database.url, ...peer.env },
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
    sink.figures.push(...versusDbos(results), ...webhooksVersusNone(results));
    sink.notes.push(
      `workload: ${config.concurrency} runs in flight, each 3 tool batches of 3 no-op calls and a final answer, scripted model, no queue; WAL and write transactions measured one run (or one write) at a time with nothing else writing and no checkpoint in the window (so no full-page images); the steady state adds them: all WAL of ${config.steadyRuns} runs right after a CHECKPOINT, on a database holding the ${1 + config.runs * config.rounds + config.serialRuns + config.historySizes.length * config.growthReps} runs measured before them (bigger tables take more full-page images: a floor for a long-lived database)`,
      'DBOS twice: as benched (the model in the workflow body, so no model output is durable) and with each model turn a DBOS.runStep (every model output durable, as Cairn stores it)',
    );
    // a peer that cannot run is reported, never a failure of the benchmark; Cairn's own failure is
    return {
      figures: sink.figures,
      notes: sink.notes,
      failed: failures.has('cairn') ? [`cairn: ${failures.get('cairn')}`] : [],
    };
  },
};
