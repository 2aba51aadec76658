import { join } from 'node:path';
import {
  buildAppBundle,
  buildWorkerBundle,
  REPO_ROOT,
  spawnApp,
  type AppProcess,
  type SpawnAppOptions,
  type WorkerBundle,
} from '@cairn/services';

/** The compiled worker: its entry, and the chaos registry to give it as `CAIRN_REGISTRY`. */
export type CompiledWorker = WorkerBundle;

/**
 * Compiles the worker app, its execution thread and the chaos registry to
 * plain JavaScript. A worker started from it is ready in about a second, as a
 * built deployment is, instead of the many seconds tsx takes to compile it on
 * a loaded machine: with a SIGKILL every few seconds, that start-up time would
 * otherwise be all the fleet ever does.
 */
export function buildCompiledWorker(): Promise<CompiledWorker> {
  return buildWorkerBundle({
    outDir: join(REPO_ROOT, '.cairn/chaos-build'),
    registryEntry: join(REPO_ROOT, 'chaos/chaos-registry.ts'),
  });
}

/** Starts the compiled worker `script` as `spawnApp` starts an app. */
export function spawnCompiledWorker(script: string, options: SpawnAppOptions): AppProcess {
  return spawnApp('worker', { ...options, script });
}

/**
 * Compiles the producer app with the chaos registry, as {@link buildCompiledWorker} does the
 * worker: a producer SIGKILLed every few seconds restarts in about a second instead of the tens
 * of seconds tsx takes on a loaded machine. Its output sits two levels under `apps/producer`,
 * where the producer finds its assets.
 */
export async function buildCompiledProducer(): Promise<CompiledWorker> {
  const bundle = await buildAppBundle({
    app: 'producer',
    outDir: join(REPO_ROOT, 'apps/producer/.cairn/chaos-build'),
    registryEntries: { registry: join(REPO_ROOT, 'chaos/chaos-registry.ts') },
  });
  return { script: bundle.script, registry: bundle.registries.registry! };
}
