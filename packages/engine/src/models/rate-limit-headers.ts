import type { RateLimitInfo } from '../capacity/model-capacity.js';

/** Milliseconds per unit of a Go-style duration (`1h2m3.5s`, `20ms`), as OpenAI writes `x-ratelimit-reset-*`. */
const DURATION_UNIT_MS: Readonly<Record<string, number>> = {
  h: 3_600_000,
  m: 60_000,
  s: 1_000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 0.000_001,
};

const DURATION_PART = /(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)/y;
const NUMBER = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/**
 * What a provider's answer (a 429) says about its rate limits, read from its
 * `retry-after-ms`, `retry-after`, `x-ratelimit-remaining-*` and
 * `x-ratelimit-reset-*` headers. A header that is missing or does not parse
 * is left out, never thrown.
 *
 * @example
 * rateLimitInfoOf(new Headers({ 'retry-after': '2', 'x-ratelimit-reset-tokens': '6m0s' }));
 * // { retryAfterMs: 2000, resetTokensMs: 360000 }
 */
export function rateLimitInfoOf(headers: Headers, now = Date.now()): RateLimitInfo {
  const info: RateLimitInfo = {};
  const retryAfterMs =
    numberOf(headers.get('retry-after-ms')) ?? retryAfterOf(headers.get('retry-after'), now);
  if (retryAfterMs !== undefined) info.retryAfterMs = retryAfterMs;
  const remainingRequests = numberOf(headers.get('x-ratelimit-remaining-requests'));
  if (remainingRequests !== undefined) info.remainingRequests = remainingRequests;
  const remainingTokens = numberOf(headers.get('x-ratelimit-remaining-tokens'));
  if (remainingTokens !== undefined) info.remainingTokens = remainingTokens;
  const resetRequestsMs = durationMsOf(headers.get('x-ratelimit-reset-requests'));
  if (resetRequestsMs !== undefined) info.resetRequestsMs = resetRequestsMs;
  const resetTokensMs = durationMsOf(headers.get('x-ratelimit-reset-tokens'));
  if (resetTokensMs !== undefined) info.resetTokensMs = resetTokensMs;
  return info;
}

/** `retry-after`: seconds, or an HTTP date (in ms from `now`, never negative). */
function retryAfterOf(value: string | null, now: number): number | undefined {
  const seconds = numberOf(value);
  if (seconds !== undefined) return seconds * 1_000;
  if (value === null || !/[a-z]/i.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A duration in OpenAI's format (`1s`, `6m0s`, `20ms`, `1h2m3.5s`) or a bare number of seconds, in ms. */
function durationMsOf(value: string | null): number | undefined {
  const seconds = numberOf(value);
  if (seconds !== undefined) return seconds * 1_000;
  const text = value?.trim() ?? '';
  if (text === '') return undefined;
  let ms = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < text.length) {
    const part = DURATION_PART.exec(text);
    if (!part) return undefined;
    ms += Number(part[1]) * DURATION_UNIT_MS[part[2]!]!;
  }
  return Number.isFinite(ms) ? ms : undefined;
}

/** A finite non-negative decimal number, else undefined. */
function numberOf(value: string | null): number | undefined {
  const text = value?.trim() ?? '';
  if (!NUMBER.test(text)) return undefined;
  const number = Number(text);
  return Number.isFinite(number) ? number : undefined;
}
