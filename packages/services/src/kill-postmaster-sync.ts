import { readFileSync } from 'node:fs';
import { join } from 'node:path';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Synchronously sends an immediate shutdown (SIGQUIT) to the postmaster of `dataDir` and waits up to `timeoutMs` for it to exit; for exit handlers, where nothing async runs. */
export function killPostmasterSync(dataDir: string, timeoutMs = 5_000): void {
  let pid: number;
  try {
    pid = Number.parseInt(
      readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '',
      10,
    );
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  process.kill(pid, 'SIGQUIT');
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid) && Date.now() < deadline) sleepSync(20);
}
