import { join } from 'node:path';
import { spawnApp, type AppProcess } from '@cairn/services';

/** A worker process of the chaos fleet. */
export interface ChaosWorker {
  /** Which of the fleet's places it fills; a replacement takes its predecessor's slot. */
  slot: number;
  /** Its `CAIRN_WORKER_ID`: `w<slot>-g<generation>`. */
  id: string;
  app: AppProcess;
  /** True once it logged that it started. */
  ready: boolean;
  /** True while SIGSTOPped. */
  frozen: boolean;
}

/** How long a SIGTERMed worker may take to hand its runs back before it is SIGKILLed. */
const TERM_GRACE_MS = 60_000;

/** Worker processes on shared configuration: spawn, signal, replace, stop. */
export class ChaosFleet {
  /** Every worker ever spawned, in order. */
  readonly all: ChaosWorker[] = [];
  private readonly generations = new Map<number, number>();

  constructor(
    private readonly env: Record<string, string | undefined>,
    private readonly logDir: string,
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
    const app = spawnApp('worker', {
      name: id,
      env: { ...this.env, CAIRN_WORKER_ID: id },
      logFile: join(this.logDir, `${id}.log`),
    });
    const worker: ChaosWorker = { slot, id, app, ready: false, frozen: false };
    this.all.push(worker);
    app.waitForLog('worker started', 120_000).then(
      () => (worker.ready = true),
      () => undefined,
    );
    return worker;
  }

  /** Workers that are alive, started and not frozen, by slot. */
  serving(): ChaosWorker[] {
    return this.all.filter((w) => w.app.alive && w.ready && !w.frozen).sort((a, b) => a.slot - b.slot);
  }

  /** SIGKILLs the worker and resolves once it is gone. */
  async kill(worker: ChaosWorker): Promise<void> {
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
    worker.app.kill('SIGTERM');
    const timer = setTimeout(() => worker.app.kill('SIGKILL'), TERM_GRACE_MS);
    const code = await worker.app.exited;
    clearTimeout(timer);
    return code;
  }

  /** Stops every live worker gracefully (frozen ones are thawed first), SIGKILLing stragglers. */
  async stopAll(): Promise<void> {
    const alive = this.all.filter((w) => w.app.alive);
    for (const w of alive) if (w.frozen) this.freeze(w, false);
    await Promise.all(alive.map((w) => this.terminate(w)));
  }
}
