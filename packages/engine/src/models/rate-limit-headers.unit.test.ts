import { describe, expect, it } from 'vitest';
import { rateLimitInfoOf } from './rate-limit-headers.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');

function infoOf(headers: Record<string, string>) {
  return rateLimitInfoOf(new Headers(headers), NOW);
}

describe('rateLimitInfoOf', () => {
  it('reads all of an OpenAI 429 headers', () => {
    expect(
      infoOf({
        'retry-after': '2',
        'retry-after-ms': '1523.5',
        'x-ratelimit-limit-requests': '500',
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-remaining-tokens': '149820',
        'x-ratelimit-reset-requests': '1.523s',
        'x-ratelimit-reset-tokens': '6m0s',
      }),
    ).toEqual({
      retryAfterMs: 1523.5,
      remainingRequests: 0,
      remainingTokens: 149820,
      resetRequestsMs: 1523,
      resetTokensMs: 360_000,
    });
  });

  it('reads nothing from an answer without rate-limit headers', () => {
    expect(infoOf({ 'content-type': 'application/json' })).toEqual({});
  });

  it('takes retry-after in seconds when retry-after-ms is missing', () => {
    expect(infoOf({ 'retry-after': '20' })).toEqual({ retryAfterMs: 20_000 });
    expect(infoOf({ 'retry-after': '0.5' })).toEqual({ retryAfterMs: 500 });
  });

  it('takes retry-after as an HTTP date, in ms from now, never negative', () => {
    expect(infoOf({ 'retry-after': 'Sun, 01 Mar 2026 12:00:30 GMT' })).toEqual({
      retryAfterMs: 30_000,
    });
    expect(infoOf({ 'retry-after': 'Sun, 01 Mar 2026 11:59:00 GMT' })).toEqual({
      retryAfterMs: 0,
    });
  });

  it('falls back to retry-after when retry-after-ms does not parse', () => {
    expect(infoOf({ 'retry-after-ms': 'soon', 'retry-after': '3' })).toEqual({
      retryAfterMs: 3_000,
    });
  });

  it.each([
    ['1s', 1_000],
    ['6m0s', 360_000],
    ['20ms', 20],
    ['1h2m3.5s', 3_723_500],
    ['59.2s', 59_200],
    ['0s', 0],
    ['1m30s', 90_000],
    ['500us', 0.5],
    ['7.5', 7_500],
    [' 2s ', 2_000],
  ])('reads the reset duration %j as %d ms', (value, ms) => {
    expect(
      infoOf({ 'x-ratelimit-reset-requests': value, 'x-ratelimit-reset-tokens': value }),
    ).toEqual({ resetRequestsMs: ms, resetTokensMs: ms });
  });

  it.each([
    '',
    'soon',
    '-1s',
    '1x',
    's',
    '1s2',
    'NaN',
    'Infinity',
    '1e3',
    '1.2.3s',
    '9'.repeat(400),
  ])('ignores the garbage value %j in every header', (value) => {
    expect(
      infoOf({
        'retry-after': value,
        'retry-after-ms': value,
        'x-ratelimit-remaining-requests': value,
        'x-ratelimit-remaining-tokens': value,
        'x-ratelimit-reset-requests': value,
        'x-ratelimit-reset-tokens': value,
      }),
    ).toEqual({});
  });
});
