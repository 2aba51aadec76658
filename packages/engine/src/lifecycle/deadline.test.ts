import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { SYSTEM_CLOCK } from '../engine-resources.js';
import { CancelRequestedError, DeadlineExceededError } from '../errors.js';
import { deadlineSignal, deadlinePassed } from './deadline.js';
import { dispositionOfError, serializeError } from './error-disposition.js';
import { endingOfError } from './run-ending.js';

const inMs = (ms: number) => new Date(Date.now() + ms);

describe("an execution's deadline", () => {
  it('aborts the execution with DeadlineExceededError naming the run and its deadline, and ends the run in ERROR', async () => {
    const deadlineAt = inMs(30);
    const execution = deadlineSignal({ runId: 'r1', deadlineAt }, undefined, SYSTEM_CLOCK);
    await once(execution.signal, 'abort');
    execution.stop();

    const reason = execution.signal.reason as DeadlineExceededError;
    expect(reason).toBeInstanceOf(DeadlineExceededError);
    expect(reason).toMatchObject({ runId: 'r1', deadlineAt });
    expect(reason.message).toContain(
      `run r1 passed its deadline (${deadlineAt.toISOString()}); continue it with a new deadline_ms`,
    );
    // Whatever the aborted call threw, the run ends in ERROR with the deadline, never CANCELLED.
    const ending = endingOfError(new Error('fetch aborted'), execution.signal, []);
    expect(ending).toMatchObject({
      status: 'ERROR',
      error: { name: 'DeadlineExceededError', message: reason.message },
    });
    expect(dispositionOfError(reason)).toBe('end-run-in-error');
    expect(serializeError(reason).kind).toBe('deadline');
  });

  it('is aborted from the start when the deadline passed before the claim', () => {
    const execution = deadlineSignal(
      { runId: 'r1', deadlineAt: inMs(-1000) },
      undefined,
      SYSTEM_CLOCK,
    );
    expect(execution.signal.aborted).toBe(true);
    expect(execution.signal.reason).toBeInstanceOf(DeadlineExceededError);
    expect(deadlinePassed({ deadlineAt: inMs(-1) }, new Date())).toBe(true);
    expect(deadlinePassed({ deadlineAt: null }, new Date())).toBe(false);
  });

  it("restates its team's deadline as the member run's own, and passes a cancel on as a cancel", () => {
    const team = new AbortController();
    const member = deadlineSignal(
      { runId: 'm1', deadlineAt: inMs(60_000) },
      team.signal,
      SYSTEM_CLOCK,
    );
    const teamDeadline = inMs(-5);
    team.abort(new DeadlineExceededError('t1', teamDeadline));
    expect(member.signal.reason).toMatchObject({ runId: 'm1', deadlineAt: teamDeadline });
    member.stop();

    const cancelled = new AbortController();
    const execution = deadlineSignal(
      { runId: 'r2', deadlineAt: inMs(60_000) },
      cancelled.signal,
      SYSTEM_CLOCK,
    );
    cancelled.abort(new CancelRequestedError('r2'));
    expect(execution.signal.reason).toBeInstanceOf(CancelRequestedError);
    expect(endingOfError(new Error('aborted'), execution.signal, []).status).toBe('CANCELLED');
    execution.stop();
  });

  it('follows a deadline a continue moved while the execution runs: it aborts at the new one', async () => {
    const execution = deadlineSignal(
      { runId: 'r1', deadlineAt: inMs(40) },
      undefined,
      SYSTEM_CLOCK,
    );
    const later = inMs(150);
    execution.moveTo(later);
    // A fixed time: past the old deadline, the claim is that it does NOT abort there.
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(execution.signal.aborted).toBe(false);
    await once(execution.signal, 'abort');
    expect(execution.signal.reason).toMatchObject({ runId: 'r1', deadlineAt: later });
    execution.stop();
  });

  it('never aborts a run without a deadline, nor once its execution stopped', async () => {
    const free = deadlineSignal({ runId: 'r1', deadlineAt: null }, undefined, SYSTEM_CLOCK);
    const stopped = deadlineSignal({ runId: 'r2', deadlineAt: inMs(20) }, undefined, SYSTEM_CLOCK);
    stopped.stop();
    // A fixed window: past the 20 ms deadline, the claim is that neither signal aborts.
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(free.signal.aborted).toBe(false);
    expect(stopped.signal.aborted).toBe(false);
    free.stop();
  });
});
