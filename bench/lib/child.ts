import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RESULT_PREFIX } from './child-result.js';

/** The repository root (where `node --import tsx` resolves). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Options of {@link runChild}. */
export interface RunChildOptions {
  args?: string[];
  env?: Record<string, string | undefined>;
  /** @defaultValue 300_000 */
  timeoutMs?: number;
  /** Extra node flags, e.g. `--expose-gc`. */
  nodeFlags?: string[];
}

/** The node arguments that run a TypeScript file from the repository's sources. */
export function tsNodeArgs(script: string, nodeFlags: string[] = []): string[] {
  return [...nodeFlags, '--import', 'tsx', '--conditions=source', script];
}

/**
 * Runs a TypeScript file (path relative to the repository root) in a fresh
 * node process and returns the value it printed with `reportResult`; throws
 * with the child's stderr tail when it fails or prints none.
 */
export function runChild<T>(script: string, options: RunChildOptions = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...tsNodeArgs(script, options.nodeFlags), ...(options.args ?? [])],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, ...options.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 300_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
      if (code === 0 && line) {
        resolve(JSON.parse(line.slice(RESULT_PREFIX.length)) as T);
        return;
      }
      const why = signal ? `killed by ${signal}` : `exit code ${code}`;
      reject(
        new Error(
          `${script} failed (${why}): ${stderr.trim().split('\n').slice(-6).join(' | ') || 'no output'}`,
        ),
      );
    });
  });
}
