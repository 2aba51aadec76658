import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { REPO_ROOT } from './child.js';

/** Where the compiled worker goes (`.cairn/` is git-ignored). */
const OUT_DIR = join(REPO_ROOT, '.cairn/bench-build');

/** The compiled worker: its entry and the registry module to give it as `CAIRN_REGISTRY`. */
export interface CompiledWorker {
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
 * Compiles the worker app, its execution thread and the benchmark registry to
 * plain JavaScript (esbuild, shared chunks so classes stay one), to measure a
 * worker that runs without the tsx loader, as a built deployment would.
 */
export async function buildCompiledWorker(): Promise<CompiledWorker> {
  await build({
    entryPoints: {
      main: join(REPO_ROOT, 'apps/worker/src/main.ts'),
      'execution-thread': join(REPO_ROOT, 'packages/queue/src/execution/execution-thread.ts'),
      'bench-registry': join(REPO_ROOT, 'bench/lib/bench-registry.ts'),
    },
    outdir: OUT_DIR,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    conditions: ['source'],
    plugins: [externalPackages],
    logLevel: 'silent',
  });
  return { script: join(OUT_DIR, 'main.js'), registry: join(OUT_DIR, 'bench-registry.js') };
}
