import { createHash, randomBytes } from 'node:crypto';
import type { IdGenerator } from '@opentelemetry/sdk-trace-base';

/**
 * Span ids that every process derives alike: a run's `cairn.run` span and
 * each of its attempts' `cairn.attempt` spans have ids computed from the run
 * id (and epoch), so the worker that takes a run over after a SIGKILL can
 * end the dead worker's attempt and parent its own to the same run span,
 * and the spans the dead worker exported still hang in the same tree.
 */
export function derivedSpanId(...parts: (string | number)[]): string {
  return createHash('sha256').update(parts.join(':')).digest('hex').slice(0, 16);
}

/** A trace id derived from a run id: the trace of a run started without a traced request. */
export function derivedTraceId(runId: string): string {
  return createHash('sha256').update(`trace:${runId}`).digest('hex').slice(0, 32);
}

/**
 * The tracer provider's id generator: random ids, except for the span being
 * started inside {@link ChosenIdGenerator.startWith}, which gets the ids given.
 */
export class ChosenIdGenerator implements IdGenerator {
  private chosen: { traceId?: string; spanId: string } | undefined;

  /** Calls `start` (which must start exactly one span, synchronously) with the next ids fixed. */
  startWith<T>(ids: { traceId?: string; spanId: string }, start: () => T): T {
    this.chosen = ids;
    try {
      return start();
    } finally {
      this.chosen = undefined;
    }
  }

  generateTraceId(): string {
    return this.chosen?.traceId ?? randomBytes(16).toString('hex');
  }

  generateSpanId(): string {
    const id = this.chosen?.spanId;
    if (id) {
      this.chosen = { ...this.chosen, spanId: '' };
      return id;
    }
    return randomBytes(8).toString('hex');
  }
}
