/** A pass that runs every so often until stopped. */
export interface PeriodicPass {
  /** Stops the timer and waits for a pass in progress to end. */
  stop(): Promise<void>;
}

/**
 * Runs `pass` every `everyMs` on an unref'd timer (it never keeps a process
 * alive), one pass at a time: a tick that comes while the last pass still
 * runs is skipped. A pass's error goes to `onError` and the next tick runs
 * as usual. The one skeleton of the fleet's periodic work (the reconciler,
 * retention, the served-entity heartbeat, the capacity line's wake-ups).
 */
export function startPeriodicPass(
  pass: () => Promise<unknown>,
  options: { everyMs: number; onError: (error: unknown) => void },
): PeriodicPass {
  let current: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (current) return;
    current = pass()
      .catch(options.onError)
      .finally(() => (current = undefined));
  }, options.everyMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await current;
    },
  };
}
