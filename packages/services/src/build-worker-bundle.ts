import { join } from 'node:path';
import type { Plugin } from 'esbuild';
import { REPO_ROOT } from './spawn-app.js';

/** A compiled worker: its entry script and the registry module to give it as `CAIRN_REGISTRY`. */
export interface WorkerBundle {
  script: string;
  registry: string;
}

/** Bundles the repository's own sources; leaves every third-party package to node_modules. */
const externalPackages: Plugin = {
  name: 'external-packages',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@cairn/') || args.path.startsWith('node:') ? undefined : { path: args.path, external: true },
    );
  },
};

/**
 * Compiles the worker app, its execution thread and a registry module to
 * plain JavaScript (esbuild, shared chunks so the registry's classes are the
 * engine's): a worker that starts in about a second, as a built deployment
 * does, for benchmarks and fault injection. `outDir` is best under `.cairn/`
 * (git-ignored).
 */
export async function buildWorkerBundle(options: { outDir: string; registryEntry: string }): Promise<WorkerBundle> {
  // Loaded on use: esbuild is a development dependency, absent from production installs.
  const { build } = await import('esbuild');
  await build({
    entryPoints: {
      main: join(REPO_ROOT, 'apps/worker/src/main.ts'),
      'execution-thread': join(REPO_ROOT, 'packages/runtime/src/execution/execution-thread.ts'),
      registry: options.registryEntry,
    },
    outdir: options.outDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    conditions: ['source'],
    plugins: [externalPackages],
    logLevel: 'silent',
  });
  return { script: join(options.outDir, 'main.js'), registry: join(options.outDir, 'registry.js') };
}
