import { assertNever } from '@cairn/engine/lifecycle';
import { Counter, Histogram } from 'prom-client';
import { PrometheusMetrics } from './prometheus-metrics.js';
import { registerStateGauges, type MetricSources } from './state-gauges.js';
import type { RunObservation } from './run-observation.js';

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** One webhook delivery attempt, as the worker's metrics count it: `delivered` (a 2xx), `failed` (retried later) or `gave_up` (its last attempt failed). */
export interface WebhookAttemptObservation {
  outcome: 'delivered' | 'failed' | 'gave_up';
  /** From the request's start to its answer (or failure). */
  seconds: number;
}
/** Waits for model permits: from a poll or two to a provider's reset minutes away. */
const WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/**
 * A worker's Prometheus metrics (docs/deployment.md "Metrics" and "Traces") on a prom-client
 * registry: run counters and latency histograms fed by {@link RunObservation}s,
 * and the state gauges (queue depth by state, paused runs, the model limiter's
 * waiters and caps) read at scrape time.
 */
export class CairnMetrics extends PrometheusMetrics {
  private readonly runsFinished: Counter<'entity' | 'status'>;
  private readonly runClaims: Counter<'reason'>;
  private readonly leaseLost: Counter;
  private readonly checkpointCommit: Histogram;
  private readonly modelRequest: Histogram<'model'>;
  private readonly modelTokens: Counter<'model' | 'tenant' | 'kind'>;
  private readonly modelCost: Counter<'model' | 'tenant'>;
  private readonly toolCall: Histogram<'tool' | 'status'>;
  private readonly rateLimited: Counter<'model'>;
  private readonly capacityWait: Histogram<'model' | 'tenant'>;
  private readonly webhookAttempts: Counter<'outcome'>;
  private readonly webhookAttemptSeconds: Histogram<'outcome'>;

  constructor(sources: MetricSources = {}) {
    super();
    const registers = [this.registry];
    this.runsFinished = new Counter({
      name: 'cairn_runs_finished_total',
      help: 'Runs (and member runs) that ended an execution, by entity and the status they ended in.',
      labelNames: ['entity', 'status'],
      registers,
    });
    this.runClaims = new Counter({
      name: 'cairn_run_claims_total',
      help: 'Claims of a run by an execution, by reason (run, continue, recovered, reconciled, handover).',
      labelNames: ['reason'],
      registers,
    });
    this.leaseLost = new Counter({
      name: 'cairn_lease_lost_total',
      help: 'Executions that found another execution holding their run and stopped without writing.',
      registers,
    });
    this.checkpointCommit = new Histogram({
      name: 'cairn_checkpoint_commit_seconds',
      help: 'Time of one fenced commit of a run (checkpoint or finish).',
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.modelRequest = new Histogram({
      name: 'cairn_model_request_seconds',
      help: 'Time of one model request, by model.',
      labelNames: ['model'],
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.modelTokens = new Counter({
      name: 'cairn_model_tokens_total',
      help: "Tokens the models reported, by model, tenant ('' for none) and kind: input (cached included), cached_input (the part of input served from the provider's cache), output.",
      labelNames: ['model', 'tenant', 'kind'],
      registers,
    });
    this.modelCost = new Counter({
      name: 'cairn_model_cost_usd_total',
      help: "What the model responses cost in USD at the worker's prices (CAIRN_MODEL_PRICES; 0 for a model without one), by model and tenant ('' for none).",
      labelNames: ['model', 'tenant'],
      registers,
    });
    this.toolCall = new Histogram({
      name: 'cairn_tool_call_seconds',
      help: 'Time of one tool call, by tool and status (completed, error).',
      labelNames: ['tool', 'status'],
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.rateLimited = new Counter({
      name: 'cairn_model_rate_limited_total',
      help: "Model requests a provider answered 429 (the model's limit then pauses the fleet), by model.",
      labelNames: ['model'],
      registers,
    });
    this.capacityWait = new Histogram({
      name: 'cairn_model_capacity_wait_seconds',
      help: "How long a model turn waited for the fleet's permits, parks included, by model and tenant ('' for none); observed when the permit comes.",
      labelNames: ['model', 'tenant'],
      buckets: WAIT_BUCKETS,
      registers,
    });
    this.webhookAttempts = new Counter({
      name: 'cairn_webhook_attempts_total',
      help: 'Webhook delivery attempts made by this worker, by outcome: delivered (a 2xx), failed (retried later), gave_up (the last attempt failed).',
      labelNames: ['outcome'],
      registers,
    });
    this.webhookAttemptSeconds = new Histogram({
      name: 'cairn_webhook_attempt_seconds',
      help: "Time of one webhook delivery attempt, from the request's start to its answer or failure, by outcome.",
      labelNames: ['outcome'],
      buckets: SECONDS_BUCKETS,
      registers,
    });
    registerStateGauges(this.registry, sources);
  }

  /** Records one webhook delivery attempt. */
  observeWebhookAttempt(attempt: WebhookAttemptObservation): void {
    this.webhookAttempts.inc({ outcome: attempt.outcome });
    this.webhookAttemptSeconds.observe({ outcome: attempt.outcome }, attempt.seconds);
  }

  /** Records one observation of a run's work. */
  observe(observation: RunObservation): void {
    switch (observation.kind) {
      case 'claim':
        this.runClaims.inc({ reason: observation.reason });
        return;
      case 'finished':
        this.runsFinished.inc({ entity: observation.entity, status: observation.status });
        return;
      case 'lease-lost':
        this.leaseLost.inc();
        return;
      case 'checkpoint-commit':
        this.checkpointCommit.observe(observation.seconds);
        return;
      case 'model-request': {
        const { model, tenant, usage } = observation;
        this.modelRequest.observe({ model }, observation.seconds);
        if (usage) {
          this.modelTokens.inc({ model, tenant, kind: 'input' }, usage.inputTokens);
          this.modelTokens.inc(
            { model, tenant, kind: 'cached_input' },
            usage.cachedInputTokens ?? 0,
          );
          this.modelTokens.inc({ model, tenant, kind: 'output' }, usage.outputTokens);
          this.modelCost.inc({ model, tenant }, observation.costMicroUsd / 1_000_000);
        }
        return;
      }
      case 'tool-call':
        this.toolCall.observe(
          { tool: observation.tool, status: observation.status },
          observation.seconds,
        );
        return;
      case 'rate-limited':
        this.rateLimited.inc({ model: observation.model });
        return;
      case 'capacity-wait':
        this.capacityWait.observe(
          { model: observation.model, tenant: observation.tenant },
          observation.seconds,
        );
        return;
      default:
        assertNever(observation);
    }
  }
}
