import { readFileSync } from 'node:fs';
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

/** The node flags `npm run worker` starts the compiled worker with (from the root package.json, their one owner). */
export function productionNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const command = /node ((?:--\S+ )*)apps\/worker\/dist\/main\.js/.exec(pkg.scripts.worker ?? '');
  return command?.[1]?.trim().split(/\s+/).filter(Boolean) ?? [];
}
