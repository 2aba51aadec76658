import {
  FINAL_EVENT_TYPES,
  FINISH_EVENT_TYPE,
  type RunContent,
  type RunEvent,
} from '@cairn/engine';
import {
  ROOT_CONTEXT,
  SpanStatusCode,
  TraceFlags,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ERROR_TYPE_VALUE_OTHER } from '@opentelemetry/semantic-conventions';
import { derivedSpanId, derivedTraceId, type ChosenIdGenerator } from './chosen-ids.js';
import {
  chatResponseAttributes,
  chatSpan,
  chatUsageAttributes,
  contentAttributes,
  executeToolSpan,
  invokeAgentSpan,
  modelLabelParts,
} from './genai-spans.js';
import { contextFromMetadata } from './trace-context.js';

/** A claim of a run that ended before this execution took it over. */
export interface PreviousAttempt {
  workerId: string;
  startedAt: Date;
  endedAt: Date | null;
}

/** What {@link RunTracer} needs. */
export interface RunTracerOptions {
  tracer: Tracer;
  ids: ChosenIdGenerator;
  workerId: string;
  /** Reads the attempt of `epoch` (to end the span of an attempt whose worker died). */
  previousAttempt(runId: string, epoch: number): Promise<PreviousAttempt | undefined>;
  onError?(error: unknown): void;
}

interface RunSpans {
  entity: string;
  epoch: number;
  /** Where the `cairn.run` span hangs: the job's trace context, or the team's delegation span. */
  parent: Context;
  traceId: string;
  createdAt: Date;
  attempt: Span;
  attemptContext: Context;
  model?: Span;
  /** The label (`provider:model`) of the model request in flight, for its retries' spans. */
  modelLabel?: string;
  /** The provider of the run's models, once a model request named it: the run span's `gen_ai.provider.name`. */
  provider?: string;
  tools: Map<string, Span>;
}

const FINISH_EVENTS = new Set<string>(Object.values(FINISH_EVENT_TYPE));

/**
 * Traces runs from their events (docs/deployment.md "Metrics" and "Traces"), in the
 * GenAI conventions' names (`genai-spans.ts`): `invoke_agent {name}` >
 * `cairn.attempt` > `chat {model}` / `execute_tool {name}` / `cairn.checkpoint`.
 * The run and attempt spans have ids derived from the run id and epoch, so
 * the spans of every attempt, in any process, form one tree: the worker
 * that takes a run over ends the attempt span of the one that died, and the
 * worker that finishes the run writes its `cairn.run` span. A member run's
 * `cairn.run` hangs under its team's delegation span.
 */
export class RunTracer {
  private readonly runs = new Map<string, RunSpans>();
  private readonly jobContexts = new Map<string, Context>();

  constructor(private readonly options: RunTracerOptions) {}

  /**
   * The engine's `onContent`, given only when message content is turned on
   * (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`): puts it on the
   * `chat` or `execute_tool` span in flight, which its event then ends.
   */
  readonly content = (content: RunContent): void => {
    const run = this.runs.get(content.runId);
    const span = content.kind === 'model' ? run?.model : run?.tools.get(content.toolCallId);
    span?.setAttributes(contentAttributes(content));
  };

  /** Before a job executes: the trace context it carried (BullMQ's `telemetry.metadata`). */
  begin(runId: string, metadata: string | undefined): void {
    this.jobContexts.set(runId, contextFromMetadata(metadata));
  }

  /** The engine's `onEvent` (one of its listeners). */
  readonly sink = (event: RunEvent): void => {
    const { data } = event;
    if (event.type === 'RunStarted' || event.type === 'RunContinued') {
      this.startAttempt(event);
      return;
    }
    const run = this.runs.get(event.runId);
    if (!run) return;
    const { tracer } = this.options;
    switch (event.type) {
      case 'ModelRequestStarted':
        run.modelLabel = String(data.model);
        run.provider ??= modelLabelParts(run.modelLabel).provider;
        run.model = this.startChat(event.runId, run);
        return;
      case 'ModelRequestCompleted': {
        const model = run.model;
        if (!model) return;
        if (data.retrying) {
          model.setAttribute(ATTR_ERROR_TYPE, ERROR_TYPE_VALUE_OTHER);
          model.setStatus({ code: SpanStatusCode.ERROR, message: String(data.error) });
          model.end();
          run.model = this.startChat(event.runId, run, {
            'cairn.model.retry': Number(data.attempt ?? 0),
          });
          return;
        }
        const usage = data.usage as Parameters<typeof chatUsageAttributes>[0] | null;
        model.setAttributes({
          'cairn.model.tool_calls': Number(data.toolCalls ?? 0),
          ...(usage && chatUsageAttributes(usage)),
          ...chatResponseAttributes(data),
        });
        model.end();
        run.model = undefined;
        return;
      }
      case 'ToolCallStarted': {
        const { name, attributes } = executeToolSpan(String(data.name), String(data.toolCallId));
        run.tools.set(
          String(data.toolCallId),
          tracer.startSpan(
            name,
            {
              attributes: {
                ...attributes,
                'cairn.run_id': event.runId,
                'cairn.tool.batch': Number(data.batch),
              },
            },
            run.attemptContext,
          ),
        );
        return;
      }
      case 'ToolCallCompleted':
      case 'ToolCallError': {
        const span = run.tools.get(String(data.toolCallId));
        if (!span) return;
        if (event.type === 'ToolCallError') {
          span.setAttribute(ATTR_ERROR_TYPE, ERROR_TYPE_VALUE_OTHER);
          span.setStatus({ code: SpanStatusCode.ERROR, message: String(data.error) });
        }
        span.end();
        run.tools.delete(String(data.toolCallId));
        return;
      }
      default:
        if (FINISH_EVENTS.has(event.type)) this.finish(event.runId, run, event.type);
    }
  };

  /** One commit of the run (checkpoint or finish), timed by the store wrapper. */
  commit(runId: string, startTime: number, endTime: number): void {
    const run = this.runs.get(runId);
    if (!run) return;
    this.options.tracer
      .startSpan('cairn.checkpoint', { startTime }, run.attemptContext)
      .end(endTime);
  }

  /**
   * The execution stopped without a finish event: a hand-over ends its
   * attempt span; a lost lease leaves it to the execution that took the run
   * (which ends it, with the same id, as abandoned).
   */
  stop(runId: string, outcome: string): void {
    const run = this.runs.get(runId);
    this.runs.delete(runId);
    this.jobContexts.delete(runId);
    if (!run || outcome === 'lease-lost') return;
    run.attempt.setAttribute('cairn.attempt.outcome', outcome);
    if (outcome !== 'handed-over')
      run.attempt.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
    run.attempt.end();
  }

  private startAttempt(event: RunEvent): void {
    const { data, runId, epoch } = event;
    const parentRun =
      typeof data.parentRunId === 'string' ? this.runs.get(data.parentRunId) : undefined;
    const parent = parentRun
      ? (this.toolContext(parentRun, data.parentToolCallId) ?? parentRun.attemptContext)
      : (this.jobContexts.get(runId) ?? ROOT_CONTEXT);
    const traceId = trace.getSpanContext(parent)?.traceId ?? derivedTraceId(runId);
    const runContext = trace.setSpanContext(ROOT_CONTEXT, {
      traceId,
      spanId: derivedSpanId('run', runId),
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    const entity = (data.entity as { name?: string } | undefined)?.name ?? 'unknown';
    const attempt = this.attemptSpan(runId, epoch, runContext, {
      'cairn.worker_id': this.options.workerId,
      'cairn.attempt.reason': String(data.reason),
    });
    this.runs.set(runId, {
      entity,
      epoch,
      parent,
      traceId,
      createdAt: typeof data.createdAt === 'string' ? new Date(data.createdAt) : new Date(),
      attempt,
      attemptContext: trace.setSpan(ROOT_CONTEXT, attempt),
      tools: new Map(),
    });
    if (data.reason === 'recovered' || data.reason === 'reconciled') {
      void this.endAbandoned(runId, epoch - 1, runContext).catch((error: unknown) =>
        this.options.onError?.(error),
      );
    }
  }

  private attemptSpan(
    runId: string,
    epoch: number,
    runContext: Context,
    attributes: Record<string, string>,
    startTime?: Date,
  ): Span {
    return this.options.ids.startWith({ spanId: derivedSpanId('attempt', runId, epoch) }, () =>
      this.options.tracer.startSpan(
        'cairn.attempt',
        {
          attributes: { 'cairn.run_id': runId, 'cairn.epoch': epoch, ...attributes },
          ...(startTime && { startTime }),
        },
        runContext,
      ),
    );
  }

  /** Writes the span of an attempt whose worker died, under the id its own spans point to. */
  private async endAbandoned(runId: string, epoch: number, runContext: Context): Promise<void> {
    if (epoch < 1) return;
    const previous = await this.options.previousAttempt(runId, epoch);
    if (!previous) return;
    const span = this.attemptSpan(
      runId,
      epoch,
      runContext,
      { 'cairn.worker_id': previous.workerId, 'cairn.attempt.outcome': 'abandoned' },
      previous.startedAt,
    );
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: 'abandoned: its worker stopped renewing the lock; the run was taken over',
    });
    span.end(previous.endedAt ?? new Date());
  }

  /** A `chat {model}` span for the run's model request in flight. */
  private startChat(runId: string, run: RunSpans, extra: Attributes = {}): Span {
    const { name, attributes } = chatSpan(run.modelLabel ?? 'unknown');
    return this.options.tracer.startSpan(
      name,
      {
        attributes: {
          ...attributes,
          'cairn.run_id': runId,
          'cairn.model': run.modelLabel ?? 'unknown',
          ...extra,
        },
      },
      run.attemptContext,
    );
  }

  private toolContext(run: RunSpans, toolCallId: unknown): Context | undefined {
    const span = typeof toolCallId === 'string' ? run.tools.get(toolCallId) : undefined;
    return span ? trace.setSpan(ROOT_CONTEXT, span) : undefined;
  }

  private finish(runId: string, run: RunSpans, type: string): void {
    run.attempt.setAttribute('cairn.attempt.outcome', type);
    if (type === FINISH_EVENT_TYPE.ERROR)
      run.attempt.setStatus({ code: SpanStatusCode.ERROR, message: 'the run ended in ERROR' });
    run.attempt.end();
    this.runs.delete(runId);
    this.jobContexts.delete(runId);
    // A paused run goes on later: its `cairn.run` span is written once, when it is over.
    if (!FINAL_EVENT_TYPES.includes(type)) return;
    const hasParent = trace.getSpanContext(run.parent) !== undefined;
    const { name, attributes } = invokeAgentSpan(run.entity, run.provider);
    const span = this.options.ids.startWith(
      { spanId: derivedSpanId('run', runId), traceId: run.traceId },
      () =>
        this.options.tracer.startSpan(
          name,
          {
            startTime: run.createdAt,
            attributes: {
              ...attributes,
              'cairn.run_id': runId,
              'cairn.entity': run.entity,
              'cairn.outcome': type,
              'cairn.attempts': run.epoch,
            },
            ...(hasParent ? {} : { root: true }),
          },
          run.parent,
        ),
    );
    if (type === FINISH_EVENT_TYPE.ERROR)
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'the run ended in ERROR' });
    span.end();
  }
}
