/**
 * The protocol between the peers section and its workload processes (Cairn,
 * DBOS, LangGraph), and the measuring loops they share. No dependencies:
 * bench/peers/src imports it.
 */
import { fullPageImageBytes, nextXid, walPosition, type Queryable } from './wal.js';

/** What a workload process is asked to measure (JSON in argv[2]). */
export interface PeerConfig {
  /** Runs per throughput round. */
  runs: number;
  /** Runs in flight at once during throughput rounds. */
  concurrency: number;
  /** Throughput rounds. */
  rounds: number;
  /** Runs executed one at a time with WAL and transaction counting. */
  serialRuns: number;
  /** History lengths (messages) at which one batch checkpoint is measured. */
  historySizes: number[];
  /** Checkpoints measured per history length. */
  growthReps: number;
  /** Runs in the steady-state window right after a CHECKPOINT (full-page images included). */
  steadyRuns: number;
}

/** One measured checkpoint write. */
export interface CheckpointSample {
  ms: number;
  walBytes: number;
}

/** What a workload process reports. */
export interface PeerResult {
  system: string;
  /** Runs per second, one value per throughput round. */
  runsPerSecond: number[];
  /** Checkpoint writes during the serial runs (the system's own unit: a commit, a step, a `put`). */
  checkpoints: CheckpointSample[];
  /** Secondary writes (LangGraph's `putWrites`), when the system has them. */
  secondaryWrites?: CheckpointSample[];
  /** Per serial run: wall time, WAL bytes and write transactions of the whole run. */
  serial: { ms: number; walBytes: number; writeTx: number }[];
  /** Per history length: the batch checkpoint measured at that length. */
  growth: { size: number; samples: CheckpointSample[] }[];
  /** The steady-state window: WAL per run including full-page images, right after a CHECKPOINT. */
  steady?: SteadyWal;
  /** Statements the client sent per run, counted on a traced pool (Cairn's workload only). */
  statementsPerRun?: number[];
  notes: string[];
}

/** The config from argv[2]. */
export function readConfig(): PeerConfig {
  return JSON.parse(process.argv[2] ?? '{}') as PeerConfig;
}

/** Runs `total` calls of `work` with at most `concurrency` in flight. */
export async function runConcurrently(
  total: number,
  concurrency: number,
  work: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < total) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, lane));
}

/** Runs/s of `run` over `config.rounds` rounds of `config.runs` runs each (after one warm-up run). */
export async function measureRate(
  config: PeerConfig,
  run: (i: number) => Promise<void>,
): Promise<number[]> {
  await run(-1);
  const rates: number[] = [];
  for (let round = 0; round < config.rounds; round++) {
    const start = performance.now();
    await runConcurrently(config.runs, config.concurrency, run);
    rates.push(config.runs / ((performance.now() - start) / 1000));
  }
  return rates;
}

/** Runs `run` one at a time `config.serialRuns` times, measuring each run's wall time, WAL bytes and write transactions. */
export async function measureSerial(
  config: PeerConfig,
  reader: Queryable,
  run: (i: number) => Promise<void>,
) {
  const serial: PeerResult['serial'] = [];
  for (let i = 0; i < config.serialRuns; i++) {
    const [wal0, xid0] = [await walPosition(reader), await nextXid(reader)];
    const start = performance.now();
    await run(i);
    const ms = performance.now() - start;
    const [wal1, xid1] = [await walPosition(reader), await nextXid(reader)];
    serial.push({ ms, walBytes: Number(wal1 - wal0), writeTx: xid1 - xid0 });
  }
  return serial;
}

/** WAL per run over a window of runs that starts with a CHECKPOINT, so each page's first change pays its full-page image. */
export interface SteadyWal {
  runs: number;
  /** All WAL bytes of the window per run, full-page images included. */
  walBytesPerRun: number;
  /** Of which full-page images (pg_walinspect), when the extension is available. */
  fpiBytesPerRun?: number;
}

/**
 * Forces a CHECKPOINT, then runs `config.steadyRuns` runs at `config.concurrency`
 * and divides the window's WAL by the runs: the cost a run pays in steady state,
 * where the server checkpoints every few minutes and the first change of each
 * page after it writes the whole page (the serial figures, between checkpoints, have none).
 */
export async function measureSteadyState(
  config: PeerConfig,
  reader: Queryable,
  run: (i: number) => Promise<void>,
): Promise<SteadyWal> {
  await reader.query('CHECKPOINT');
  const start = await walPosition(reader);
  await runConcurrently(config.steadyRuns, config.concurrency, run);
  const end = await walPosition(reader);
  const fpi = await fullPageImageBytes(reader, start, end);
  return {
    runs: config.steadyRuns,
    walBytesPerRun: Number(end - start) / config.steadyRuns,
    ...(fpi !== undefined && { fpiBytesPerRun: fpi / config.steadyRuns }),
  };
}

/** Measured writes run one at a time (even when the system issues them concurrently), so each one's WAL window holds only its own bytes. */
let measuring: Promise<unknown> = Promise.resolve();

/** Wraps a checkpoint write so that, while `on` is true, its time and WAL bytes go to `into` (serial use only). */
export function checkpointProbe(reader: Queryable) {
  return {
    on: false,
    into: [] as CheckpointSample[],
    measure<T>(write: () => Promise<T>): Promise<T> {
      if (!this.on) return write();
      const into = this.into;
      const run = measuring.then(async () => {
        const before = await walPosition(reader);
        const start = performance.now();
        const result = await write();
        const ms = performance.now() - start;
        into.push({ ms, walBytes: Number((await walPosition(reader)) - before) });
        return result;
      });
      measuring = run.catch(() => undefined);
      return run;
    },
  };
}
