import type { ReplayDivergence } from './replay-result.js';

/** Ends a replay at its first divergence (thrown out of the turn loop, or carried by its abort). */
export class DivergenceFound extends Error {
  constructor(readonly divergence: ReplayDivergence) {
    super(divergence.message);
    this.name = 'DivergenceFound';
  }
}

/** Ends a replay where the stored history ends before the run did (a run paused, failed or still running). */
export class StoredHistoryEnded extends Error {
  constructor(readonly runId: string) {
    super(`the stored history of run ${runId} ends here`);
    this.name = 'StoredHistoryEnded';
  }
}

/** A stored failed tool result, given back to the turn loop as the tool's throw. */
export class StoredToolFailure extends Error {}
