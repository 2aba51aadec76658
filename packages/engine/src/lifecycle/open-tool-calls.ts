import type { FinishStatus } from './run-status.js';

/**
 * The result a `running` tool row gets when its run finishes before the call
 * did (cancelled while the tool slept, an error, a takeover that ended the
 * run): the finish closes it with status `error`, so no finished run shows a
 * call still running.
 */
export function interruptedToolResult(status: FinishStatus): string {
  return `interrupted: the run ended ${status} before this call finished`;
}
