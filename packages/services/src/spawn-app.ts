import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import type { CairnApp } from './cairn-app.js';
import { compiledAppFor } from './compiled-app.js';
import { REPO_ROOT } from './repo-root.js';

/**
 * How long `waitForLog` waits by default: a compiled worker or producer starts in about a second
 * alone, but under a full test run's load (two suites at once reached load 26), with several
 * processes starting side by side, a start passed 30 s.
 */
export const LOG_WAIT_MS = 90_000;

/** Options of {@link spawnApp}. */
export interface SpawnAppOptions {
  /** A label for messages (e.g. the worker id). */
  name: string;
  /** Environment on top of this process's own. */
  env: Record<string, string | undefined>;
  /** Where stdout and stderr go (appended). */
  logFile: string;
  /**
   * A compiled entry script to run instead of the app's TypeScript sources (see `buildWorkerBundle`).
   * @defaultValue the test run's compiled app when it holds the app's registry (`CAIRN_TEST_APP_BUNDLE`), else none: the sources
   */
  script?: string;
}

/** A Cairn app running as a child process. */
export interface AppProcess {
  name: string;
  proc: ChildProcess;
  logFile: string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** True until the process has exited. */
  readonly alive: boolean;
  kill(signal: NodeJS.Signals): void;
  /** Resolves once the log contains `text`; rejects if the process exits first or after `timeoutMs`. */
  waitForLog(text: string, timeoutMs?: number): Promise<void>;
}

/** Starts `apps/<app>/src/main.ts` from its TypeScript sources (or a compiled script, see {@link SpawnAppOptions.script}), logging to a file. */
export function spawnApp(app: CairnApp, options: SpawnAppOptions): AppProcess {
  const env = { ...process.env, ...options.env };
  const compiled = options.script ? undefined : compiledAppFor(app, env.CAIRN_REGISTRY);
  if (compiled) env.CAIRN_REGISTRY = compiled.registry;
  const script = options.script ?? compiled?.script;
  const fd = openSync(options.logFile, 'a');
  const args = script
    ? [script]
    : ['--import', 'tsx', '--conditions=source', `apps/${app}/src/main.ts`];
  const proc = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => resolve((exitCode = code))),
  );
  const handle: AppProcess = {
    name: options.name,
    proc,
    logFile: options.logFile,
    exited,
    get alive() {
      return exitCode === undefined;
    },
    kill: (signal) => void proc.kill(signal),
    waitForLog: async (text, timeoutMs = LOG_WAIT_MS) => {
      const deadline = Date.now() + timeoutMs;
      while (!readFileSync(options.logFile, 'utf8').includes(text)) {
        if (!handle.alive) {
          throw new Error(
            `${app} ${options.name} exited (code ${exitCode}) before logging "${text}"; see ${options.logFile}`,
          );
        }
        if (Date.now() > deadline)
          throw new Error(`${app} ${options.name} did not log "${text}" within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
  return handle;
}
