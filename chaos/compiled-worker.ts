import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, type AppProcess, type SpawnAppOptions } from '@cairn/services';
import { build, type Plugin } from 'esbuild';

/** Where the compiled worker goes (`.cairn/` is git-ignored). */
const OUT_DIR = join(REPO_ROOT, '.cairn/chaos-build');

/** The compiled worker: its entry, and the chaos registry to give it as `CAIRN_REGISTRY`. */
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
 * Compiles the worker app, its execution thread and the chaos registry to
 * plain JavaScript (shared chunks, so the registry's classes are the
 * engine's). A worker started from it is ready in about a second, as a built
 * deployment is, instead of the many seconds tsx takes to compile it on a
 * loaded machine: with a SIGKILL every few seconds, that start-up time would
 * otherwise be all the fleet ever does.
 */
export async function buildCompiledWorker(): Promise<CompiledWorker> {
  await build({
    entryPoints: {
      main: join(REPO_ROOT, 'apps/worker/src/main.ts'),
      'execution-thread': join(REPO_ROOT, 'packages/queue/src/execution/execution-thread.ts'),
      'chaos-registry': join(REPO_ROOT, 'chaos/chaos-registry.ts'),
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
  return { script: join(OUT_DIR, 'main.js'), registry: join(OUT_DIR, 'chaos-registry.js') };
}

/** Starts the compiled worker `script` as `spawnApp` starts an app: environment on top of this process's, output appended to a log file. */
export function spawnCompiledWorker(script: string, options: SpawnAppOptions): AppProcess {
  const fd = openSync(options.logFile, 'a');
  const proc = spawn(process.execPath, [script], { cwd: REPO_ROOT, env: { ...process.env, ...options.env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve((exitCode = code))));
  const handle: AppProcess = {
    name: options.name,
    proc,
    logFile: options.logFile,
    exited,
    get alive() {
      return exitCode === undefined;
    },
    kill: (signal) => void proc.kill(signal),
    waitForLog: async (text, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!readFileSync(options.logFile, 'utf8').includes(text)) {
        if (!handle.alive) throw new Error(`worker ${options.name} exited (code ${exitCode}) before logging "${text}"; see ${options.logFile}`);
        if (Date.now() > deadline) throw new Error(`worker ${options.name} did not log "${text}" within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
  return handle;
}
