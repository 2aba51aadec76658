/**
 * The fake OpenAI server's quota: per-model limits enforced the way a
 * provider enforces them, so that tests see real 429s (with their headers)
 * when a fleet asks too much. All state lives in the server's process: the
 * workers that call it over HTTP share nothing else with it.
 */

/** One model's limits on the fake server; each absent field: no limit of that kind. */
export interface FakeModelQuota {
  /** Requests accepted in any sliding window of `windowMs`. */
  requestsPerMinute?: number;
  /** Tokens (each reply's usage total, input + output) accepted in any sliding window of `windowMs`. */
  tokensPerMinute?: number;
  /** Requests being answered at once (from receipt until the answer is sent or the client goes). */
  concurrency?: number;
}

/** The fake server's quota option: limits by the request body's `model` (a model not listed is unlimited). */
export interface FakeQuota {
  perModel: Record<string, FakeModelQuota>;
  /**
   * Length of the sliding window the per-minute limits count in; shorter in tests.
   * @defaultValue 60_000
   */
  windowMs?: number;
}

/** What the fake server has let through and refused, per model (every model, limited or not). */
export interface FakeQuotaLedger {
  /** Requests accepted (answered as scripted). */
  accepted(model: string): number;
  /** Requests refused with a 429. */
  rejected(model: string): number;
  /** Tokens of the accepted requests (their replies' usage totals). */
  tokens(model: string): number;
  /** Receipt times (`Date.now()`) of the accepted requests, in order: for measuring use per minute. */
  acceptedAt(model: string): number[];
}

/** The quota's answer to one request: go ahead (call `release` once its answer is done), or the 429 to send. */
export type FakeAdmission =
  | { admitted: true; release: () => void }
  | {
      admitted: false;
      status: 429;
      headers: Record<string, string>;
      body: Record<string, unknown>;
    };

/** Default sliding window of the per-minute limits. */
const DEFAULT_WINDOW_MS = 60_000;
/** Shortest wait a concurrency refusal advises, when no answer in flight is expected to end sooner. */
const CONCURRENCY_RETRY_MIN_MS = 100;

interface ModelState {
  /** Accepted requests still in the window: receipt time and tokens. */
  window: { at: number; tokens: number }[];
  /** Receipt times of the requests being answered. */
  inFlight: number[];
  accepted: number[];
  rejected: number;
  tokens: number;
}

/** What refused a request, and how long until it would not. */
interface Refusal {
  type: 'requests' | 'tokens';
  what: string;
  waitMs: number;
}

/** Keeps the fake server's per-model windows, in-flight counts and ledger. */
export class FakeQuotaKeeper {
  private readonly limits = new Map<string, FakeModelQuota>();
  private readonly models = new Map<string, ModelState>();
  private readonly windowMs: number;

  /** The ledger the server hands out as `quota`. */
  readonly ledger: FakeQuotaLedger = {
    accepted: (model) => this.models.get(model)?.accepted.length ?? 0,
    rejected: (model) => this.models.get(model)?.rejected ?? 0,
    tokens: (model) => this.models.get(model)?.tokens ?? 0,
    acceptedAt: (model) => [...(this.models.get(model)?.accepted ?? [])],
  };

  /** `latencyMs` is how long each answer waits before it is sent: it tells a concurrency refusal when a slot frees. */
  constructor(
    quota: FakeQuota | undefined,
    private readonly latencyMs = 0,
  ) {
    this.windowMs = quota?.windowMs ?? DEFAULT_WINDOW_MS;
    for (const [model, limits] of Object.entries(quota?.perModel ?? {}))
      this.setQuota(model, limits);
  }

  /** Replaces a model's limits from now on (undefined: unlimited); what its window holds still counts. */
  setQuota(model: string, limits: FakeModelQuota | undefined): void {
    if (limits) this.limits.set(model, { ...limits });
    else this.limits.delete(model);
  }

  /** Decides a request for `model` whose reply uses `tokens`, at its receipt: counts it if accepted. */
  admit(model: string, tokens: number, now = Date.now()): FakeAdmission {
    const state = this.stateOf(model);
    while (state.window[0] && state.window[0].at <= now - this.windowMs) state.window.shift();
    const limits = this.limits.get(model) ?? {};
    const used = {
      requests: state.window.length,
      tokens: state.window.reduce((sum, entry) => sum + entry.tokens, 0),
    };
    const waits = {
      requests: this.waitForRoom(state, now, () => 1, 1, limits.requestsPerMinute),
      tokens: this.waitForRoom(state, now, (entry) => entry.tokens, tokens, limits.tokensPerMinute),
      concurrency: this.waitForSlot(state, now, limits.concurrency),
    };
    const refusal = refusalOf(limits, used, tokens, state.inFlight.length, waits);
    if (refusal) {
      state.rejected++;
      return {
        admitted: false,
        status: 429,
        headers: rateLimitHeaders(limits, used, waits, refusal.waitMs),
        body: {
          error: {
            message: `Rate limit reached for ${model} in organization org-fake on ${refusal.what}. Please try again in ${openAIDuration(refusal.waitMs)}. Visit https://platform.openai.com/account/rate-limits to learn more.`,
            type: refusal.type,
            param: null,
            code: 'rate_limit_exceeded',
          },
        },
      };
    }
    state.window.push({ at: now, tokens });
    state.inFlight.push(now);
    state.accepted.push(now);
    state.tokens += tokens;
    let released = false;
    return {
      admitted: true,
      release: () => {
        if (released) return;
        released = true;
        state.inFlight.splice(state.inFlight.indexOf(now), 1);
      },
    };
  }

  private stateOf(model: string): ModelState {
    let state = this.models.get(model);
    if (!state) {
      state = { window: [], inFlight: [], accepted: [], rejected: 0, tokens: 0 };
      this.models.set(model, state);
    }
    return state;
  }

  /**
   * How long until the window has room for `wanted` more under `limit` (0:
   * it has), as the oldest entries leave it; a whole window when `wanted`
   * alone exceeds the limit (the request never fits).
   */
  private waitForRoom(
    state: ModelState,
    now: number,
    weight: (entry: { tokens: number }) => number,
    wanted: number,
    limit: number | undefined,
  ): number {
    if (limit === undefined) return 0;
    if (wanted > limit) return this.windowMs;
    let held = state.window.reduce((sum, entry) => sum + weight(entry), 0);
    if (held + wanted <= limit) return 0;
    for (const entry of state.window) {
      held -= weight(entry);
      if (held + wanted <= limit) return entry.at + this.windowMs - now;
    }
    return this.windowMs;
  }

  /** How long until a concurrency slot is expected to free (0: one is free): the oldest answer in flight ends `latencyMs` after its receipt. */
  private waitForSlot(state: ModelState, now: number, limit: number | undefined): number {
    if (limit === undefined || state.inFlight.length < limit) return 0;
    const oldest = Math.min(...state.inFlight);
    return Math.max(CONCURRENCY_RETRY_MIN_MS, oldest + this.latencyMs - now);
  }
}

/** The first limit the request breaks, in the order requests, tokens, concurrency; undefined when it breaks none. */
function refusalOf(
  limits: FakeModelQuota,
  used: { requests: number; tokens: number },
  tokens: number,
  inFlight: number,
  waits: { requests: number; tokens: number; concurrency: number },
): Refusal | undefined {
  const waitMs = Math.max(1, Math.ceil(Math.max(waits.requests, waits.tokens, waits.concurrency)));
  const rpm = limits.requestsPerMinute;
  if (rpm !== undefined && used.requests + 1 > rpm) {
    return {
      type: 'requests',
      what: `requests per min (RPM): Limit ${rpm}, Used ${used.requests}, Requested 1`,
      waitMs,
    };
  }
  const tpm = limits.tokensPerMinute;
  if (tpm !== undefined && used.tokens + tokens > tpm) {
    return {
      type: 'tokens',
      what: `tokens per min (TPM): Limit ${tpm}, Used ${used.tokens}, Requested ${tokens}`,
      waitMs,
    };
  }
  const concurrency = limits.concurrency;
  if (concurrency !== undefined && inFlight >= concurrency) {
    return {
      type: 'requests',
      what: `concurrent requests: Limit ${concurrency}, In flight ${inFlight}, Requested 1`,
      waitMs,
    };
  }
  return undefined;
}

/**
 * A 429's headers as OpenAI sends them; `x-ratelimit-reset-*` is how long
 * until that kind of limit has room for this request (`0s`: it has now).
 * The headers of a kind the model has no limit of are left out.
 */
function rateLimitHeaders(
  limits: FakeModelQuota,
  used: { requests: number; tokens: number },
  waits: { requests: number; tokens: number },
  waitMs: number,
): Record<string, string> {
  const headers: Record<string, string> = {
    'retry-after': String(Math.ceil(waitMs / 1_000)),
    'retry-after-ms': String(waitMs),
    'x-should-retry': 'true',
  };
  if (limits.requestsPerMinute !== undefined) {
    headers['x-ratelimit-limit-requests'] = String(limits.requestsPerMinute);
    headers['x-ratelimit-remaining-requests'] = String(
      Math.max(0, limits.requestsPerMinute - used.requests),
    );
    headers['x-ratelimit-reset-requests'] = openAIDuration(waits.requests);
  }
  if (limits.tokensPerMinute !== undefined) {
    headers['x-ratelimit-limit-tokens'] = String(limits.tokensPerMinute);
    headers['x-ratelimit-remaining-tokens'] = String(
      Math.max(0, limits.tokensPerMinute - used.tokens),
    );
    headers['x-ratelimit-reset-tokens'] = openAIDuration(waits.tokens);
  }
  return headers;
}

/** A duration as OpenAI writes it: `20ms`, `1.5s`, `59.2s`, `6m0s`, `1h2m3.5s` (`0s` for none). */
export function openAIDuration(ms: number): string {
  const whole = Math.ceil(ms);
  if (whole <= 0) return '0s';
  if (whole < 1_000) return `${whole}ms`;
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor((whole % 3_600_000) / 60_000);
  const seconds = `${(whole % 60_000) / 1_000}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  return minutes > 0 ? `${minutes}m${seconds}` : seconds;
}
