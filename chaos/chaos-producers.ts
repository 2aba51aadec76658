import { join } from 'node:path';
import { freePort, spawnApp, type AppProcess } from '@cairn/services';
import type { CompiledWorker } from './compiled-worker.js';

/** One producer process of a {@link ChaosProducers} set. */
export interface ChaosProducer {
  /** `p<slot>-g<generation>`. */
  id: string;
  slot: number;
  app: AppProcess;
  baseUrl: string;
  /** True once it logged that it listens. */
  ready: boolean;
}

/** How long a producer may take to start (tsx compiles it from sources). */
const START_MS = 120_000;

/**
 * Producer processes on shared configuration, each on a port of its own: spawn, SIGKILL and
 * replace, as `ChaosFleet` does workers. The harness's own producer is not one of them.
 */
export class ChaosProducers {
  /** Every producer ever spawned, in order. */
  readonly all: ChaosProducer[] = [];
  private readonly generations = new Map<number, number>();

  constructor(
    private readonly env: Record<string, string | undefined>,
    private readonly logDir: string,
    /** The compiled producer (`buildCompiledProducer`) it starts. */
    private readonly compiled: CompiledWorker,
  ) {}

  /** Spawns a producer in `slot` (its next generation); resolves once it listens. */
  async spawn(slot: number): Promise<ChaosProducer> {
    const generation = (this.generations.get(slot) ?? 0) + 1;
    this.generations.set(slot, generation);
    const id = `p${slot}-g${generation}`;
    const port = await freePort();
    const app = spawnApp('producer', {
      name: id,
      env: { ...this.env, PORT: String(port), CAIRN_REGISTRY: this.compiled.registry },
      logFile: join(this.logDir, `${id}.log`),
      script: this.compiled.script,
    });
    const producer: ChaosProducer = {
      id,
      slot,
      app,
      baseUrl: `http://127.0.0.1:${port}`,
      ready: false,
    };
    this.all.push(producer);
    await app.waitForLog('producer listening', START_MS);
    producer.ready = true;
    return producer;
  }

  /** Producers alive and listening. */
  serving(): ChaosProducer[] {
    return this.all.filter((p) => p.ready && p.app.alive);
  }

  /** SIGKILLs the producer and resolves once it is gone. */
  async kill(producer: ChaosProducer): Promise<void> {
    producer.app.kill('SIGKILL');
    await producer.app.exited;
  }

  /** SIGKILLs every live producer (synchronously: also for exit handlers). */
  killAllSync(): void {
    for (const p of this.all) if (p.app.alive) p.app.proc.kill('SIGKILL');
  }

  /** Stops every live producer with SIGTERM, SIGKILLing one that takes over 10 s. */
  async stopAll(): Promise<void> {
    await Promise.all(
      this.all
        .filter((p) => p.app.alive)
        .map(async (p) => {
          p.app.kill('SIGTERM');
          const timer = setTimeout(() => p.app.kill('SIGKILL'), 10_000);
          await p.app.exited;
          clearTimeout(timer);
        }),
    );
  }
}
