import { join } from 'node:path';
import {
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
