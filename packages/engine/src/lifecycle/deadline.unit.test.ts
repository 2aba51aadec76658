import { describe, expect, it } from 'vitest';
import { CancelRequestedError, DeadlineExceededError } from '../errors.js';
import { TestClock } from '../testing/test-clock.js';
import { deadlineSignal, deadlinePassed } from './deadline.js';
import { dispositionOfError, serializeError } from './error-disposition.js';
import { endingOfError } from './run-ending.js';

// Time is the test clock's: it moves when a test advances it, and the deadline's timer fires then.
describe("an execution's deadline", () => {
  it('aborts the execution with DeadlineExceededError naming the run and its deadline, and ends the run in ERROR', () => {
    const clock = new TestClock();
    const deadlineAt = clock.in(30);
    const execution = deadlineSignal({ runId: 'r1', deadlineAt }, undefined, clock);
    clock.advance(29);
    expect(execution.signal.aborted).toBe(false);
    clock.advance(1);
    expect(execution.signal.aborted).toBe(true);
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
    const clock = new TestClock();
    const execution = deadlineSignal(
      { runId: 'r1', deadlineAt: clock.in(-1000) },
      undefined,
      clock,
    );
    expect(execution.signal.aborted).toBe(true);
    expect(execution.signal.reason).toBeInstanceOf(DeadlineExceededError);
    expect(deadlinePassed({ deadlineAt: clock.in(-1) }, clock.now())).toBe(true);
    expect(deadlinePassed({ deadlineAt: null }, clock.now())).toBe(false);
  });

  it("restates its team's deadline as the member run's own, and passes a cancel on as a cancel", () => {
    const clock = new TestClock();
    const team = new AbortController();
    const member = deadlineSignal(
      { runId: 'm1', deadlineAt: clock.in(60_000) },
      team.signal,
      clock,
    );
    const teamDeadline = clock.in(-5);
    team.abort(new DeadlineExceededError('t1', teamDeadline));
    expect(member.signal.reason).toMatchObject({ runId: 'm1', deadlineAt: teamDeadline });
    member.stop();

    const cancelled = new AbortController();
    const execution = deadlineSignal(
      { runId: 'r2', deadlineAt: clock.in(60_000) },
      cancelled.signal,
      clock,
    );
    cancelled.abort(new CancelRequestedError('r2'));
    expect(execution.signal.reason).toBeInstanceOf(CancelRequestedError);
    expect(endingOfError(new Error('aborted'), execution.signal, []).status).toBe('CANCELLED');
    execution.stop();
  });

  it('follows a deadline a continue moved while the execution runs: it aborts at the new one', () => {
    const clock = new TestClock();
    const execution = deadlineSignal({ runId: 'r1', deadlineAt: clock.in(40) }, undefined, clock);
    const later = clock.in(150);
    execution.moveTo(later);
    // Past the old deadline, it does NOT abort there.
    clock.advance(80);
    expect(execution.signal.aborted).toBe(false);
    clock.advance(70);
    expect(execution.signal.aborted).toBe(true);
    expect(execution.signal.reason).toMatchObject({ runId: 'r1', deadlineAt: later });
    execution.stop();
  });

  it('never aborts a run without a deadline, nor once its execution stopped', () => {
    const clock = new TestClock();
    const free = deadlineSignal({ runId: 'r1', deadlineAt: null }, undefined, clock);
    const stopped = deadlineSignal({ runId: 'r2', deadlineAt: clock.in(20) }, undefined, clock);
    stopped.stop();
    // Past the 20 ms deadline, neither signal aborts.
    clock.advance(80);
    expect(free.signal.aborted).toBe(false);
    expect(stopped.signal.aborted).toBe(false);
    free.stop();
  });
});
