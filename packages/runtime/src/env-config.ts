import { hostname } from 'node:os';
import { z } from 'zod';
import {
  DEFAULT_CAPACITY_WAIT_MS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_VERSION_GRACE_MS,
  ON_ATTEMPTS_EXHAUSTED,
  type OnAttemptsExhausted,
  parseModelLimits,
  parseModelPrices,
  parseTenantBudgets,
  type ModelLimit,
  type ModelPrice,
  type TenantBudgets,
} from '@cairn/engine';
import { ConfigError } from './errors.js';
import { parseKeyRing } from './key-ring-entries.js';
import {
  DEFAULT_QUEUE_NAME,
  QUEUE_BACKEND_KINDS,
  type QueueBackendKind,
} from './queue-backend-kind.js';
import { DEFAULT_LOCK_MS, DEFAULT_STALLED_INTERVAL_MS } from './lock-defaults.js';
import { DEFAULT_RETAIN_DAYS } from '@cairn/store';
import { queuePrefixFor, redisUrlsOf } from './redis-connection.js';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from './webhooks/webhook-settings.js';

/** The model when `OPENAI_API_KEY` is set and `CAIRN_MODEL` is not: the seed's, on the Responses API. */
export const DEFAULT_OPENAI_MODEL = 'openai:gpt-5.4';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value?.trim() ? value.trim() : undefined));

/** An integer variable of at least `min`, `fallback` when unset. */
const integerAtLeast = (min: number, fallback: number) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value.trim() === '') return fallback;
      const n = Number(value);
      if (!Number.isInteger(n) || n < min) {
        ctx.addIssue({ code: 'custom', message: `must be an integer >= ${min}, got "${value}"` });
        return z.NEVER;
      }
      return n;
    });
const positiveInt = (fallback: number) => integerAtLeast(1, fallback);

const url = (protocols: string[]) =>
  optionalString.refine(
    (value) => value === undefined || protocols.some((p) => value.startsWith(`${p}:`)),
    `must be a URL starting with ${protocols.map((p) => `${p}:`).join(' or ')}`,
  );

/** One `redis://` URL, or several comma-separated (the seed nodes of a Redis Cluster). */
const redisUrls = optionalString.refine(
  (value) => value === undefined || redisUrlsOf(value).every((part) => /^rediss?:/.test(part)),
  'must be a URL starting with redis: or rediss: (several, comma-separated, with CAIRN_REDIS_CLUSTER=1)',
);

const flag = optionalString.refine(
  (value) => value === undefined || ['0', '1', 'true', 'false'].includes(value),
  'must be 1, 0, true or false',
);

/** `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`'s values that turn content on (spans are where Cairn records it). */
const CAPTURE_CONTENT_ON = ['true', 'span_only'];
const captureContent = optionalString.refine(
  (value) =>
    value === undefined ||
    [...CAPTURE_CONTENT_ON, 'false', 'no_content'].includes(value.toLowerCase()),
  'must be true, false, SPAN_ONLY or NO_CONTENT (Cairn records message content on spans only)',
);

const modelSpec = optionalString.refine(
  (value) => value === undefined || value === 'scripted' || /^openai(-chat)?:.+/.test(value),
  'must be "scripted", "openai:<model>" or "openai-chat:<model>"',
);

/** The registry module a worker serves when `CAIRN_REGISTRY` is unset: the seed's research team. */
export const DEFAULT_REGISTRY_MODULE = '@cairn/research-team';

/** Shortest `CAIRN_SESSION_SECRET` accepted. */
export const MIN_SESSION_SECRET_CHARS = 32;
const SESSION_SECRET_TOO_SHORT = `must be at least ${MIN_SESSION_SECRET_CHARS} characters long (e.g. openssl rand -hex 32)`;

const ENV_SCHEMA = z.object({
  DATABASE_URL: url(['postgres', 'postgresql']).refine((v) => v !== undefined, 'is required'),
  REDIS_URL: redisUrls,
  CAIRN_REDIS_CLUSTER: flag,
  CAIRN_QUEUE_BACKEND: z.enum(QUEUE_BACKEND_KINDS).optional(),
  CAIRN_QUEUE_NAME: optionalString,
  CAIRN_QUEUE_PREFIX: optionalString,
  OPENAI_API_KEY: optionalString,
  OPENAI_BASE_URL: url(['http', 'https']),
  CAIRN_MODEL: modelSpec,
  CAIRN_MODEL_STREAM: flag,
  CAIRN_REGISTRY: optionalString,
  CAIRN_WORKER_ID: optionalString,
  PORT: positiveInt(3000),
  WORKER_CONCURRENCY: positiveInt(10),
  CAIRN_EXECUTION_THREADS: integerAtLeast(0, 1),
  CAIRN_LOCK_MS: positiveInt(DEFAULT_LOCK_MS),
  CAIRN_STALLED_INTERVAL_MS: positiveInt(DEFAULT_STALLED_INTERVAL_MS),
  CAIRN_DEATH_SIGNAL: flag,
  CAIRN_PG_NAMED_STATEMENTS: flag,
  CAIRN_RECONCILE_INTERVAL_MS: positiveInt(30_000),
  CAIRN_RECONCILE_AFTER_MS: positiveInt(15_000),
  CAIRN_RETAIN_DAYS: integerAtLeast(0, DEFAULT_RETAIN_DAYS),
  CAIRN_API_KEYS: optionalString,
  CAIRN_READ_API_KEYS: optionalString,
  // Its length is checked with the keys (checkAuthConfig), for code that passes it too.
  CAIRN_SESSION_SECRET: optionalString,
  CAIRN_MAX_BODY_BYTES: positiveInt(1024 * 1024),
  CAIRN_MAX_INPUT_CHARS: positiveInt(100_000),
  CAIRN_MAX_RUNS_PER_SESSION: positiveInt(1000),
  CAIRN_MAX_STREAMS_PER_KEY: positiveInt(32),
  CAIRN_MIGRATE: optionalString,
  CAIRN_METRICS_PORT: integerAtLeast(0, -1),
  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http', 'https']),
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: captureContent,
  CAIRN_MAX_ATTEMPTS: positiveInt(DEFAULT_MAX_ATTEMPTS),
  CAIRN_ON_ATTEMPTS_EXHAUSTED: z.enum(ON_ATTEMPTS_EXHAUSTED).default('error'),
  CAIRN_VERSION_GRACE_MS: integerAtLeast(0, DEFAULT_VERSION_GRACE_MS),
  CAIRN_MODEL_LIMITS: optionalString,
  CAIRN_CAPACITY_WAIT_MS: integerAtLeast(0, DEFAULT_CAPACITY_WAIT_MS),
  CAIRN_CAPACITY_LINE: z.enum(['on', 'off']).default('on'),
  CAIRN_TENANT_WEIGHTS: optionalString,
  CAIRN_MODEL_PRICES: optionalString,
  CAIRN_TENANT_BUDGETS: optionalString,
  CAIRN_PUBLIC_URL: url(['http', 'https']),
  CAIRN_MCP_WAIT_MS: integerAtLeast(0, -1),
  CAIRN_WEBHOOK_MAX_ATTEMPTS: positiveInt(DEFAULT_WEBHOOK_SETTINGS.maxAttempts),
  CAIRN_WEBHOOK_BACKOFF_MS: positiveInt(DEFAULT_WEBHOOK_SETTINGS.backoffMs),
  CAIRN_WEBHOOK_MAX_BACKOFF_MS: positiveInt(DEFAULT_WEBHOOK_SETTINGS.maxBackoffMs),
  CAIRN_WEBHOOK_TIMEOUT_MS: positiveInt(DEFAULT_WEBHOOK_SETTINGS.timeoutMs),
  CAIRN_WEBHOOK_POLL_MS: positiveInt(DEFAULT_WEBHOOK_SETTINGS.pollMs),
  CAIRN_WEBHOOK_ALLOW_PRIVATE: flag,
  LOG_LEVEL: z.enum(LOG_LEVELS).optional(),
});

/** Every environment variable Cairn's configuration reads (docs/configuration.md lists each). */
export const CAIRN_ENV_VARIABLES: readonly string[] = Object.freeze(Object.keys(ENV_SCHEMA.shape));

/** Cairn's configuration, parsed once from the environment at start. */
export interface CairnEnvConfig {
  databaseUrl: string;
  /** `REDIS_URL`: one server, or (with {@link CairnEnvConfig.redisCluster}) one or more cluster nodes, comma-separated. */
  redisUrl?: string;
  /** `CAIRN_REDIS_CLUSTER=1`: every Redis connection is an ioredis `Cluster`; the queue prefix is hash-tagged. @defaultValue false */
  redisCluster: boolean;
  /** `CAIRN_QUEUE_BACKEND`, else redis when `REDIS_URL` is set, else postgres. */
  queueBackend: QueueBackendKind;
  /** @defaultValue {@link DEFAULT_QUEUE_NAME} */
  queueName: string;
  /** `CAIRN_QUEUE_PREFIX`: Redis key prefix or BullMQ Postgres schema; `{cairn}` by default in cluster mode, where it must hold a `{hash tag}`. */
  queuePrefix?: string;
  openaiApiKey?: string;
  openaiBaseUrl?: string;
  /** `scripted` (default without `OPENAI_API_KEY`), `openai:<model>` or `openai-chat:<model>`; undefined keeps the registry's own models. */
  model: string;
  /** `CAIRN_MODEL_STREAM=false`: the model `CAIRN_MODEL` names never asks to stream (for servers whose stream drops tool calls). @defaultValue true */
  modelStream: boolean;
  /** Module exporting `createRegistry({ model? })`. @defaultValue '@cairn/research-team' */
  registryModule: string;
  /** @defaultValue `${hostname}:${pid}` */
  workerId: string;
  /** @defaultValue 3000 */
  port: number;
  /** @defaultValue 10 */
  workerConcurrency: number;
  /** Threads that execute runs, apart from the one renewing job locks; 0 executes in the main thread. @defaultValue 1 */
  executionThreads: number;
  /** @defaultValue 2000 */
  lockMs: number;
  /** @defaultValue 500 */
  stalledIntervalMs: number;
  /**
   * `CAIRN_DEATH_SIGNAL`: a liveness connection per worker, and a dead worker's runs resume
   * once it has been gone 150 ms, not when their locks expire; `0` turns it off. @defaultValue true
   */
  deathSignal: boolean;
  /**
   * `CAIRN_PG_NAMED_STATEMENTS`: statements with parameters go to Postgres as named (prepared)
   * statements, planned once per connection; `0` sends them unnamed (a pooler that cannot keep
   * them). @defaultValue true
   */
  namedStatements: boolean;
  /** @defaultValue 30000 */
  reconcileIntervalMs: number;
  /** Runs idle this long with no live job are reconciled. @defaultValue 15000 */
  reconcileAfterMs: number;
  /** `CAIRN_RETAIN_DAYS`: finished runs older than this many days are deleted; 0 keeps everything. @defaultValue 30 */
  retainDays: number;
  /** Bearer keys of the HTTP API; empty (and no read keys): no auth. */
  apiKeys: string[];
  /** `CAIRN_READ_API_KEYS`: bearer keys that may only read (GET, HEAD); writes answer 403. */
  readApiKeys: string[];
  /** `CAIRN_SESSION_SECRET`: signs browser sessions, so adding a key keeps them; unset: a secret derived from the keys signs them. */
  sessionSecret?: string;
  /** Largest request body the producer accepts. @defaultValue 1 MiB */
  maxBodyBytes: number;
  /** Longest run `input` the producer accepts, in characters (422 beyond). @defaultValue 100000 */
  maxInputChars: number;
  /** Most top-level runs one session may hold (429 beyond). @defaultValue 1000 */
  maxRunsPerSession: number;
  /** Most event streams (SSE) one API key holds open at once, with auth off one client address (429 beyond). @defaultValue 32 */
  maxStreamsPerKey: number;
  /** Claims of a run with no new checkpoint in between beyond which it ends in ERROR. @defaultValue 20 */
  maxAttempts: number;
  /** `CAIRN_ON_ATTEMPTS_EXHAUSTED`: a run past `maxAttempts` ends in ERROR (`error`) or waits suspended for an operator's resume (`suspend`). @defaultValue 'error' */
  onAttemptsExhausted: OnAttemptsExhausted;
  /** How long a run whose entity a worker lacks is left for another worker before it ends in ERROR. @defaultValue 300000 */
  versionGraceMs: number;
  /** `CAIRN_MIGRATE=1`: apply the store's migrations at start (tests, demo). */
  migrate: boolean;
  /** `CAIRN_METRICS_PORT`: where a worker serves Prometheus `/metrics` (0: a free port); unset: no metrics server. */
  metricsPort?: number;
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: workers and the producer export traces there over OTLP/HTTP; unset: no tracing. */
  otlpEndpoint?: string;
  /** `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`: spans carry prompts, answers, tool arguments and results. @defaultValue false */
  captureMessageContent: boolean;
  /** `CAIRN_MODEL_LIMITS`: fleet-wide limits per model (they win over a registry's `modelLimits` for the same model). @defaultValue [] */
  modelLimits: ModelLimit[];
  /** `CAIRN_CAPACITY_WAIT_MS`: how long a run waits in place for a model permit before it parks. @defaultValue 1000 */
  capacityWaitMs: number;
  /**
   * `CAIRN_CAPACITY_LINE` (`on` or `off`): a run parked for a model's capacity waits in the model's
   * line and is woken when room frees (`off`: it leaves the line and comes back when the limit
   * expects room, as before). @defaultValue true
   */
  capacityLine: boolean;
  /** `CAIRN_TENANT_WEIGHTS` (`acme:3,globex:1`): tenants' shares of the queue's worker slots and of a limit several wait on; a tenant not listed weighs 1. @defaultValue {} */
  tenantWeights: Record<string, number>;
  /** `CAIRN_MODEL_PRICES`: USD per million tokens by model (they win over a registry's `modelPrices`), as `parseModelPrices` reads them. @defaultValue {} */
  modelPrices: Record<string, ModelPrice>;
  /**
   * `CAIRN_TENANT_BUDGETS` (`acme:25,globex:5`): USD each tenant may spend per UTC day, counted fleet-wide;
   * a spent tenant's new runs get 429 and its running runs pause with a budget action. @defaultValue {}
   */
  tenantBudgets: TenantBudgets;
  /** `CAIRN_PUBLIC_URL`: the producer's address as people reach it, for the links webhooks carry; unset: links are paths. */
  publicUrl?: string;
  /** `CAIRN_MCP_WAIT_MS`: how long `/mcp`'s start tools wait for their run (docs/mcp.md); unset: the producer's default. */
  mcpWaitMs?: number;
  /** `CAIRN_WEBHOOK_*`: how workers deliver webhooks, and whether endpoints may target private addresses. */
  webhooks: WebhookSettings;
  /** @defaultValue 'info' */
  logLevel: (typeof LOG_LEVELS)[number];
}

/** Parses Cairn's environment variables; throws {@link ConfigError} naming the first bad variable. */
export function parseEnvConfig(env: NodeJS.ProcessEnv = process.env): CairnEnvConfig {
  const result = ENV_SCHEMA.safeParse(env);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new ConfigError(String(issue.path[0] ?? 'environment'), issue.message);
  }
  const e = result.data;
  const queueBackend = e.CAIRN_QUEUE_BACKEND ?? (e.REDIS_URL ? 'redis' : 'postgres');
  if (queueBackend === 'redis' && !e.REDIS_URL) {
    throw new ConfigError('REDIS_URL', 'is required when CAIRN_QUEUE_BACKEND=redis');
  }
  const redisCluster = e.CAIRN_REDIS_CLUSTER === '1' || e.CAIRN_REDIS_CLUSTER === 'true';
  if (e.REDIS_URL && !redisCluster && redisUrlsOf(e.REDIS_URL).length > 1) {
    throw new ConfigError(
      'REDIS_URL',
      'names several servers; set CAIRN_REDIS_CLUSTER=1 for a Redis Cluster',
    );
  }
  const queuePrefix = queuePrefixFor(
    redisCluster && queueBackend === 'redis',
    e.CAIRN_QUEUE_PREFIX,
  );
  if (queuePrefix.problem) throw new ConfigError('CAIRN_QUEUE_PREFIX', queuePrefix.problem);
  // A missing OPENAI_API_KEY fails the worker (modelFromSpec), not the producer, which needs no model.
  const model = e.CAIRN_MODEL ?? (e.OPENAI_API_KEY ? DEFAULT_OPENAI_MODEL : 'scripted');
  const apiKeys = keyList(e.CAIRN_API_KEYS);
  const readApiKeys = keyList(e.CAIRN_READ_API_KEYS);
  checkAuthConfig({ apiKeys, readApiKeys, sessionSecret: e.CAIRN_SESSION_SECRET });
  return {
    databaseUrl: e.DATABASE_URL!,
    redisUrl: e.REDIS_URL,
    redisCluster,
    queueBackend,
    queueName: e.CAIRN_QUEUE_NAME ?? DEFAULT_QUEUE_NAME,
    queuePrefix: queuePrefix.prefix,
    openaiApiKey: e.OPENAI_API_KEY,
    openaiBaseUrl: e.OPENAI_BASE_URL,
    model,
    modelStream: e.CAIRN_MODEL_STREAM !== '0' && e.CAIRN_MODEL_STREAM !== 'false',
    registryModule: e.CAIRN_REGISTRY ?? DEFAULT_REGISTRY_MODULE,
    workerId: e.CAIRN_WORKER_ID ?? `${hostname()}:${process.pid}`,
    port: e.PORT,
    workerConcurrency: e.WORKER_CONCURRENCY,
    executionThreads: e.CAIRN_EXECUTION_THREADS,
    lockMs: e.CAIRN_LOCK_MS,
    stalledIntervalMs: e.CAIRN_STALLED_INTERVAL_MS,
    deathSignal: e.CAIRN_DEATH_SIGNAL !== '0' && e.CAIRN_DEATH_SIGNAL !== 'false',
    namedStatements: e.CAIRN_PG_NAMED_STATEMENTS !== '0' && e.CAIRN_PG_NAMED_STATEMENTS !== 'false',
    reconcileIntervalMs: e.CAIRN_RECONCILE_INTERVAL_MS,
    reconcileAfterMs: e.CAIRN_RECONCILE_AFTER_MS,
    retainDays: e.CAIRN_RETAIN_DAYS,
    apiKeys,
    readApiKeys,
    sessionSecret: e.CAIRN_SESSION_SECRET,
    maxBodyBytes: e.CAIRN_MAX_BODY_BYTES,
    maxInputChars: e.CAIRN_MAX_INPUT_CHARS,
    maxRunsPerSession: e.CAIRN_MAX_RUNS_PER_SESSION,
    maxStreamsPerKey: e.CAIRN_MAX_STREAMS_PER_KEY,
    maxAttempts: e.CAIRN_MAX_ATTEMPTS,
    onAttemptsExhausted: e.CAIRN_ON_ATTEMPTS_EXHAUSTED,
    versionGraceMs: e.CAIRN_VERSION_GRACE_MS,
    migrate: e.CAIRN_MIGRATE === '1' || e.CAIRN_MIGRATE === 'true',
    metricsPort: e.CAIRN_METRICS_PORT >= 0 ? e.CAIRN_METRICS_PORT : undefined,
    otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
    captureMessageContent: CAPTURE_CONTENT_ON.includes(
      e.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.toLowerCase() ?? '',
    ),
    modelLimits: modelLimitsOf(e.CAIRN_MODEL_LIMITS),
    capacityWaitMs: e.CAIRN_CAPACITY_WAIT_MS,
    capacityLine: e.CAIRN_CAPACITY_LINE === 'on',
    tenantWeights: tenantWeightsOf(e.CAIRN_TENANT_WEIGHTS),
    modelPrices: modelPricesOf(e.CAIRN_MODEL_PRICES),
    tenantBudgets: tenantBudgetsOf(e.CAIRN_TENANT_BUDGETS),
    publicUrl: e.CAIRN_PUBLIC_URL,
    mcpWaitMs: e.CAIRN_MCP_WAIT_MS >= 0 ? e.CAIRN_MCP_WAIT_MS : undefined,
    webhooks: {
      maxAttempts: e.CAIRN_WEBHOOK_MAX_ATTEMPTS,
      backoffMs: e.CAIRN_WEBHOOK_BACKOFF_MS,
      maxBackoffMs: e.CAIRN_WEBHOOK_MAX_BACKOFF_MS,
      timeoutMs: e.CAIRN_WEBHOOK_TIMEOUT_MS,
      pollMs: e.CAIRN_WEBHOOK_POLL_MS,
      allowPrivate:
        e.CAIRN_WEBHOOK_ALLOW_PRIVATE === '1' || e.CAIRN_WEBHOOK_ALLOW_PRIVATE === 'true',
    },
    logLevel: e.LOG_LEVEL ?? 'info',
  };
}

function modelPricesOf(raw: string | undefined): Record<string, ModelPrice> {
  if (raw === undefined) return {};
  try {
    return Object.fromEntries(parseModelPrices(raw, 'CAIRN_MODEL_PRICES'));
  } catch (error) {
    const message = (error as Error).message.replace(/^CAIRN_MODEL_PRICES: /, '');
    throw new ConfigError('CAIRN_MODEL_PRICES', message);
  }
}

function tenantBudgetsOf(raw: string | undefined): TenantBudgets {
  if (raw === undefined) return {};
  try {
    return parseTenantBudgets(raw, 'CAIRN_TENANT_BUDGETS');
  } catch (error) {
    const message = (error as Error).message.replace(/^CAIRN_TENANT_BUDGETS: /, '');
    throw new ConfigError('CAIRN_TENANT_BUDGETS', message);
  }
}

function modelLimitsOf(raw: string | undefined): ModelLimit[] {
  if (raw === undefined) return [];
  try {
    return parseModelLimits(raw, 'CAIRN_MODEL_LIMITS');
  } catch (error) {
    const message = (error as Error).message.replace(/^CAIRN_MODEL_LIMITS: /, '');
    throw new ConfigError('CAIRN_MODEL_LIMITS', message);
  }
}

/** `acme:3,globex:1`: each entry a tenant and a positive weight. */
function tenantWeightsOf(raw: string | undefined): Record<string, number> {
  const weights: Record<string, number> = {};
  for (const [index, entry] of (raw ?? '').split(',').entries()) {
    if (entry.trim() === '') continue;
    const match = /^\s*([^:\s]+)\s*:\s*([0-9]+(?:\.[0-9]+)?)\s*$/.exec(entry);
    const weight = match ? Number(match[2]) : NaN;
    if (!match || !(weight > 0)) {
      throw new ConfigError(
        'CAIRN_TENANT_WEIGHTS',
        `entry ${index} ("${entry.trim()}") must be <tenant>:<weight above 0>, e.g. acme:3`,
      );
    }
    if (Object.hasOwn(weights, match[1]!))
      throw new ConfigError('CAIRN_TENANT_WEIGHTS', `tenant "${match[1]}" is listed twice`);
    weights[match[1]!] = weight;
  }
  return weights;
}

function keyList(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
}

/** Refuses (ConfigError naming the variable) a key ring that does not parse or a session secret too short to sign with. */
function checkAuthConfig(
  config: Pick<CairnEnvConfig, 'apiKeys' | 'readApiKeys' | 'sessionSecret'>,
): void {
  parseKeyRing(config.apiKeys, config.readApiKeys);
  if (
    config.sessionSecret !== undefined &&
    config.sessionSecret.length < MIN_SESSION_SECRET_CHARS
  ) {
    throw new ConfigError('CAIRN_SESSION_SECRET', SESSION_SECRET_TOO_SHORT);
  }
}

/**
 * The environment's configuration with `overrides` on top: what code that
 * starts a worker or a producer passes wins, the environment gives the rest
 * (so `DATABASE_URL` need not be set when `databaseUrl` is passed).
 */
export function resolveEnvConfig(
  overrides: Partial<CairnEnvConfig> = {},
  env: NodeJS.ProcessEnv = process.env,
): CairnEnvConfig {
  const urls: NodeJS.ProcessEnv = {};
  if (overrides.databaseUrl !== undefined) urls.DATABASE_URL = overrides.databaseUrl;
  if (overrides.redisUrl !== undefined) urls.REDIS_URL = overrides.redisUrl;
  if (overrides.queueBackend !== undefined) urls.CAIRN_QUEUE_BACKEND = overrides.queueBackend;
  const config = parseEnvConfig({ ...env, ...urls });
  const given = Object.fromEntries(
    Object.entries(overrides).filter(([, value]) => value !== undefined),
  );
  const resolved: CairnEnvConfig = { ...config, ...given };
  // Keys and a secret given by code are held to the environment's rules.
  checkAuthConfig(resolved);
  return resolved;
}
