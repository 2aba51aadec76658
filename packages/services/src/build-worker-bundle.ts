import { join } from 'node:path';
import type { Plugin } from 'esbuild';
import { REPO_ROOT } from './repo-root.js';
import type { CairnApp } from './cairn-app.js';

/** A compiled worker: its entry script and the registry module to give it as `CAIRN_REGISTRY`. */
export interface WorkerBundle {
  script: string;
  registry: string;
}

/** A compiled app with its registry modules: its entry script and, by output name, each registry's compiled module. */
export interface AppBundle {
  script: string;
  registries: Record<string, string>;
}

/**
 * Third-party packages a bundle leaves to node_modules even when it takes in
 * the others: native addons, and Bull Board, which finds its UI files beside
 * its code.
 */
const NEVER_BUNDLED = /^(pg-native|msgpackr-extract|@bull-board\/[^/]+)(\/|$)/;

/** Bundles the repository's own sources, and the third-party packages too when `thirdParty` (but {@link NEVER_BUNDLED}'s); leaves the others to node_modules. */
function externalPackages(thirdParty: boolean): Plugin {
  return {
    name: 'external-packages',
    setup(builder) {
      builder.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('@cairn/') || args.path.startsWith('node:')) return undefined;
        return !thirdParty || NEVER_BUNDLED.test(args.path)
          ? { path: args.path, external: true }
          : undefined;
      });
    },
  };
}

/**
 * Gives each output file of an ESM bundle a `require`, for the CommonJS
 * packages bundled into it that require Node's modules (or an external
 * package) as they run.
 */
const REQUIRE_BANNER =
  "import { createRequire as createRequireOfBundle } from 'node:module'; const require = createRequireOfBundle(import.meta.url);";

/**
 * Compiles the worker app, its execution thread and a registry module to
 * plain JavaScript (esbuild, shared chunks so the registry's classes are the
 * engine's): a worker that starts in about a second, as a built deployment
 * does, for benchmarks and fault injection. `outDir` is best under `.cairn/`
 * (git-ignored).
 */
export async function buildWorkerBundle(options: {
  outDir: string;
  registryEntry: string;
}): Promise<WorkerBundle> {
  const bundle = await buildAppBundle({
    app: 'worker',
    outDir: options.outDir,
    registryEntries: { registry: options.registryEntry },
  });
  return { script: bundle.script, registry: bundle.registries.registry! };
}

/**
 * Compiles `apps/<app>/src/main.ts` (with the worker's execution thread) and
 * several registry modules (`registryEntries`: output name → source file) in
 * one build, as {@link buildWorkerBundle} does. The producer reads its assets
 * two folders up from its code: give it an `outDir` two levels under
 * `apps/producer` (e.g. `apps/producer/.cairn/<name>`).
 */
export async function buildAppBundle(options: {
  app: CairnApp;
  outDir: string;
  registryEntries: Record<string, string>;
  /**
   * `external`: third-party packages load from node_modules, as in a built
   * deployment. `bundled`: they are compiled into the bundle too (except
   * native addons and Bull Board), which saves a process about a third of a
   * second of module resolution and loading per thread.
   * @defaultValue 'external'
   */
  dependencies?: 'external' | 'bundled';
}): Promise<AppBundle> {
  const bundled = options.dependencies === 'bundled';
  // Loaded on use: esbuild is a development dependency, absent from production installs.
  const { build } = await import('esbuild');
  await build({
    entryPoints: {
      main: join(REPO_ROOT, `apps/${options.app}/src/main.ts`),
      ...(options.app === 'worker' && {
        'execution-thread': join(REPO_ROOT, 'packages/runtime/src/execution/execution-thread.ts'),
      }),
      ...options.registryEntries,
    },
    outdir: options.outDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    conditions: ['source'],
    plugins: [externalPackages(bundled)],
    ...(bundled && { banner: { js: REQUIRE_BANNER } }),
    logLevel: 'silent',
  });
  const registries = Object.fromEntries(
    Object.keys(options.registryEntries).map((name) => [name, join(options.outDir, `${name}.js`)]),
  );
  return { script: join(options.outDir, 'main.js'), registries };
}
