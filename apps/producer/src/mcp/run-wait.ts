import { setTimeout as sleep } from 'node:timers/promises';
import { IDLE_STATUSES, type RunStatus } from '@cairn/engine';
import type { StoredEvent } from '@cairn/store';
import type { ProducerClient } from '../producer-client.js';

/** How {@link waitForIdleRun} waits. */
interface RunWaitOptions {
  /** Longest wait, in ms; 0 reads the status once. */
  boundMs: number;
  /** How often the store is read, in ms. */
  pollMs: number;
  /** Ends the wait early (the MCP request was cancelled or its client went away). */
  signal?: AbortSignal;
  /** Each event the run records while it is waited for, in order. */
  onEvent?: (event: StoredEvent) => Promise<void>;
}

/**
 * Waits until the run is idle (finished, or paused for a person: docs/architecture.md "Run
 * statuses and their transitions") or `boundMs` has passed, reading its status and new events
 * every `pollMs`; answers the last status read.
 */
export async function waitForIdleRun(
  client: ProducerClient,
  runId: string,
  { boundMs, pollMs, signal, onEvent }: RunWaitOptions,
): Promise<RunStatus | undefined> {
  const deadline = Date.now() + boundMs;
  let afterSeq = 0;
  for (;;) {
    const status = await client.getRunStatus(runId);
    if (onEvent) {
      for (const event of await client.listEvents(runId, afterSeq)) {
        afterSeq = event.seq;
        await onEvent(event);
      }
    }
    const left = deadline - Date.now();
    if (!status || IDLE_STATUSES.includes(status) || left <= 0 || signal?.aborted) return status;
    await sleep(Math.min(pollMs, left), undefined, { signal }).catch(() => undefined);
  }
}
