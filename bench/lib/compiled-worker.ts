import { join } from 'node:path';
import { buildWorkerBundle, type WorkerBundle } from '@cairn/services';
import { REPO_ROOT } from './child.js';

/** The compiled worker: its entry and the registry module to give it as `CAIRN_REGISTRY`. */
export type CompiledWorker = WorkerBundle;

/**
 * Compiles the worker app, its execution thread and the benchmark registry to
 * plain JavaScript, to measure a worker that runs without the tsx loader, as a
 * built deployment would.
 */
export function buildCompiledWorker(): Promise<CompiledWorker> {
  return buildWorkerBundle({
    outDir: join(REPO_ROOT, '.cairn/bench-build'),
    registryEntry: join(REPO_ROOT, 'bench/lib/bench-registry.ts'),
  });
}
