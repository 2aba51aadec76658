const cleanups = new Set<() => void>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function runCleanups(): void {
  for (const cleanup of [...cleanups]) {
    cleanups.delete(cleanup);
    try {
      cleanup();
    } catch {
      // best effort: the process is going away
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  // Another listener owns shutdown on this signal; the 'exit' listener still catches what it leaves behind.
  if (process.listenerCount(signal) > 1) return;
  runCleanups();
  for (const s of SIGNALS) process.removeListener(s, onSignal);
  process.kill(process.pid, signal);
}

let installed = false;

/** Runs `cleanup` (synchronous) if the process exits or is signalled before the returned unregister function is called. */
export function registerExitCleanup(cleanup: () => void): () => void {
  if (!installed) {
    installed = true;
    process.on('exit', runCleanups);
    for (const signal of SIGNALS) process.on(signal, onSignal);
  }
  cleanups.add(cleanup);
  return () => {
    cleanups.delete(cleanup);
  };
}
