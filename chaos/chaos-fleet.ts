import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppProcess, SpawnAppOptions } from '@cairn/services';

/** A worker process of the chaos fleet. */
export interface ChaosWorker {
  /** Which of the fleet's places it fills; a replacement takes its predecessor's slot. */
  slot: number;
  /** Its `CAIRN_WORKER_ID`: `w<slot>-g<generation>`. */
  id: string;
  app: AppProcess;
  /** True once it logged that it started. */
  ready: boolean;
  /** When it logged that it started (ms since the epoch). */
  readyAt?: number;
  /** True while SIGSTOPped. */
  frozen: boolean;
  /** True once the harness signalled it to end (SIGKILL, SIGTERM): its exit is no crash. */
  ended: boolean;
  /** True while a fault has picked it: no other fault may pick it meanwhile. */
  targeted: boolean;
}

/** A worker that exited without the harness asking: crashed after it started, or failed to start. */
export interface UnexpectedExit {
  workerId: string;
  /** Exit code, or the signal that ended it. */
  exit: number | string | null;
  /** True when it had started (a crash), false when it never did (e.g. a server down at start). */
  afterStart: boolean;
  at: number;
  /** The end of its log (the crash's stack trace). */
  logTail: string;
}

/** How long a SIGTERMed worker may take to hand its runs back before it is SIGKILLed. */
const TERM_GRACE_MS = 60_000;

/** How long the fleet waits before restarting a worker that exited unexpectedly (a supervisor's restart policy). */
const RESTART_DELAY_MS = 1_000;

/**
 * Worker processes on shared configuration: spawn, signal, replace, stop.
 * Like a supervisor, it restarts a worker that exits on its own, and records it.
 */
export class ChaosFleet {
  /** Every worker ever spawned, in order. */
  readonly all: ChaosWorker[] = [];
  /** Workers that exited without being asked to. */
  readonly unexpectedExits: UnexpectedExit[] = [];
  private readonly generations = new Map<number, number>();
  private stopping = false;

  constructor(
    private readonly env: Record<string, string | undefined>,
    private readonly logDir: string,
    private readonly spawnWorker: (options: SpawnAppOptions) => AppProcess,
  ) {}

  /** Spawns `size` workers and waits until each has started. */
  async start(size: number): Promise<void> {
    const workers = Array.from({ length: size }, (_, slot) => this.spawn(slot));
    await Promise.all(workers.map((w) => w.app.waitForLog('worker started', 120_000)));
  }

  /** Spawns a worker in `slot` (its next generation); it becomes `ready` in the background. */
  spawn(slot: number): ChaosWorker {
    const generation = (this.generations.get(slot) ?? 0) + 1;
    this.generations.set(slot, generation);
    const id = `w${slot}-g${generation}`;
    const app = this.spawnWorker({
      name: id,
      env: { ...this.env, CAIRN_WORKER_ID: id },
      logFile: join(this.logDir, `${id}.log`),
    });
    const worker: ChaosWorker = {
      slot,
      id,
      app,
      ready: false,
      frozen: false,
      ended: false,
      targeted: false,
    };
    this.all.push(worker);
    app.waitForLog('worker started', 120_000).then(
      () => {
        worker.ready = true;
        worker.readyAt = Date.now();
      },
      () => undefined,
    );
    void app.exited.then((code) => {
      if (worker.ended || this.stopping) return;
      this.unexpectedExits.push({
        workerId: id,
        exit: code ?? app.proc.signalCode,
        afterStart: worker.ready,
        at: Date.now(),
        logTail: readFileSync(app.logFile, 'utf8').slice(-2000),
      });
      setTimeout(() => {
        if (!this.stopping) this.spawn(slot);
      }, RESTART_DELAY_MS);
    });
    return worker;
  }

  /** Workers that are alive, started (at least `minServingMs` ago), and no fault's target, by slot. */
  serving(minServingMs = 0): ChaosWorker[] {
    const startedBefore = Date.now() - minServingMs;
    return this.all
      .filter(
        (w) =>
          w.app.alive &&
          w.ready &&
          (w.readyAt ?? Infinity) <= startedBefore &&
          !w.frozen &&
          !w.ended &&
          !w.targeted,
      )
      .sort((a, b) => a.slot - b.slot);
  }

  /** SIGKILLs the worker and resolves once it is gone. */
  async kill(worker: ChaosWorker): Promise<void> {
    worker.ended = true;
    worker.app.kill('SIGKILL');
    await worker.app.exited;
  }

  /** SIGSTOP (`frozen`) or SIGCONT. */
  freeze(worker: ChaosWorker, frozen: boolean): void {
    worker.frozen = frozen;
    worker.app.kill(frozen ? 'SIGSTOP' : 'SIGCONT');
  }

  /** SIGTERM (graceful hand-over); resolves with its exit code, SIGKILLing it after a grace period. */
  async terminate(worker: ChaosWorker): Promise<number | null> {
    worker.ended = true;
    worker.app.kill('SIGTERM');
    const timer = setTimeout(() => worker.app.kill('SIGKILL'), TERM_GRACE_MS);
    const code = await worker.app.exited;
    clearTimeout(timer);
    return code;
  }

  /** Stops every live worker gracefully (frozen ones are thawed first), SIGKILLing stragglers. */
  async stopAll(): Promise<void> {
    this.stopping = true;
    const alive = this.all.filter((w) => w.app.alive);
    for (const w of alive) if (w.frozen) this.freeze(w, false);
    await Promise.all(alive.map((w) => this.terminate(w)));
  }
}

/** SIGKILLs every process in `apps` that is still alive, synchronously (for exit handlers). */
export function killAllSync(
  apps: readonly { alive: boolean; proc: { kill(signal: NodeJS.Signals): boolean } }[],
): void {
  for (const app of apps) {
    if (app.alive) {
      app.proc.kill('SIGCONT');
      app.proc.kill('SIGKILL');
    }
  }
}
