import { retentionCutoff, type PruneResult, type StoreOps } from '@cairn/store';
import { startPeriodicPass, type PeriodicPass } from './periodic-pass.js';
import { SILENT_LOGGER, type WorkerLogger } from './worker-logger.js';

/** How often a worker applies the retention policy. */
export const RETENTION_INTERVAL_MS = 10 * 60_000;

/** Options of {@link startRetention}. */
export interface RetentionOptions {
  /** Retention is an operation: it needs the store's operations part only. */
  store: StoreOps;
  /** `CAIRN_RETAIN_DAYS`; 0 keeps everything (no pass runs). */
  retainDays: number;
  /** @defaultValue {@link RETENTION_INTERVAL_MS} */
  intervalMs?: number;
  logger?: WorkerLogger;
}

/** A periodic retention pass. */
export type RetentionHandle = PeriodicPass;

/** Applies the retention policy once: deletes finished runs older than `retainDays` (one worker at a time); undefined for 0. */
export async function applyRetention(options: RetentionOptions): Promise<PruneResult | undefined> {
  const olderThan = retentionCutoff(options.retainDays);
  if (!olderThan) return undefined;
  const result = await options.store.pruneFinishedRuns({ olderThan });
  if (result.runs > 0) {
    (options.logger ?? SILENT_LOGGER).info(
      { runs: result.runs, sessions: result.sessions, batches: result.batches },
      'pruned finished runs',
    );
  }
  return result;
}

/** Runs {@link applyRetention} every `intervalMs` (errors are logged, never thrown); nothing when `retainDays` is 0. */
export function startRetention(options: RetentionOptions): RetentionHandle {
  if (options.retainDays === 0) return { stop: () => Promise.resolve() };
  const logger = options.logger ?? SILENT_LOGGER;
  return startPeriodicPass(() => applyRetention(options), {
    everyMs: options.intervalMs ?? RETENTION_INTERVAL_MS,
    onError: (error) => logger.warn({ err: error }, 'retention pass failed'),
  });
}
