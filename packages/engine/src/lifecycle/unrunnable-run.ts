import type { EngineResources } from '../engine-resources.js';
import type { AttemptReason, RunRecord } from '../run-types.js';
import { errorInfo } from './run-ending.js';
import { FINISH_EVENT_TYPE, type RunStatus } from './run-status.js';

/**
 * Ends a run this engine cannot execute (its entity unknown, or known with
 * another definition, after the version grace period; or past its deadline) in ERROR, in one claim
 * from one of `from` (a decided PAUSED run's resume included) and its fenced
 * finish: its attempt shows who ended it and why. Nothing ran, so a waiting
 * continue's input (and its upgrade) stays for the next continue.
 */
export async function endUnrunnableRun(
  resources: EngineResources,
  runId: string,
  reason: AttemptReason,
  error: Error,
  from: readonly RunStatus[],
): Promise<RunRecord> {
  const { store, workerId, clock } = resources;
  const { epoch, run, continueRequest } = await store.claimRun(runId, { workerId, reason, from });
  const info = errorInfo(error);
  const event = {
    type: FINISH_EVENT_TYPE.ERROR,
    runId,
    epoch,
    data: { error: info },
    at: clock.now().toISOString(),
  };
  const failed = await store.finishRun(runId, epoch, {
    status: 'ERROR',
    content: null,
    error: info,
    delta: {
      messages: [],
      toolCalls: [],
      usage: run.usage,
      events: [event],
      ...(continueRequest && { keepsContinueRequest: continueRequest.requestId }),
    },
  });
  resources.events(event);
  return failed;
}
