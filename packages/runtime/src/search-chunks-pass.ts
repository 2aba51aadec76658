import type { StoreOps } from '@cairn/store';
import { startPeriodicPass, type PeriodicPass } from './periodic-pass.js';
import { SILENT_LOGGER, type WorkerLogger } from './worker-logger.js';

/**
 * How often a worker closes the run list search's full chunks: the open chunk,
 * which a search reads by scan, holds at most a chunk's rows plus those created
 * in this time (packages/store/src/search-chunks.ts).
 */
const SEARCH_CHUNKS_INTERVAL_MS = 30_000;

/**
 * Runs the store's `closeSearchChunks` every `intervalMs` (one worker at a
 * time; errors are logged, never thrown), logging the chunks it closed or merged.
 */
export function startSearchChunks(options: {
  store: Pick<StoreOps, 'closeSearchChunks'>;
  intervalMs?: number;
  logger?: WorkerLogger;
}): PeriodicPass {
  const logger = options.logger ?? SILENT_LOGGER;
  return startPeriodicPass(
    async () => {
      const result = await options.store.closeSearchChunks();
      if (result.closed > 0 || result.merged > 0)
        logger.info({ closed: result.closed, merged: result.merged }, 'closed search chunks');
    },
    {
      everyMs: options.intervalMs ?? SEARCH_CHUNKS_INTERVAL_MS,
      onError: (error) => logger.warn({ err: error }, 'search chunks pass failed'),
    },
  );
}
