import { describe, expect, it } from 'vitest';
import { ApiKeyRing } from './api-keys.js';
import { BrowserSessions, SESSION_MAX_AGE_S } from './browser-session.js';

describe('browser sessions', () => {
  const keys = new ApiKeyRing(['full-key'], ['read-key']);

  it('round-trips a session whose cookie holds no key, with its access and CSRF token', () => {
    const sessions = new BrowserSessions(keys);
    const issued = sessions.issue(keys.find('read-key')!);
    expect(issued.cookieValue).not.toContain('read-key');
    expect(sessions.verify(issued.cookieValue)).toEqual({ principal: issued.principal, csrfToken: issued.csrfToken });
    expect(issued.principal.access).toBe('read');
    expect(sessions.csrfMatches(issued, issued.csrfToken)).toBe(true);
    expect(sessions.csrfMatches(issued, `${issued.csrfToken.slice(0, -1)}x`)).toBe(false);
    expect(sessions.csrfMatches(issued, undefined)).toBe(false);
  });

  it('refuses a tampered, truncated, expired or foreign cookie, and one whose key is no longer configured', () => {
    let now = Date.now();
    const sessions = new BrowserSessions(keys, () => now);
    const { cookieValue } = sessions.issue(keys.find('read-key')!);
    const [keyId, expiry, nonce, mac] = cookieValue.split('.') as [string, string, string, string];
    const fullKeyId = keys.find('full-key')!.keyId;
    for (const forged of [
      `${fullKeyId}.${expiry}.${nonce}.${mac}`, // upgrade to the full key
      `${keyId}.${Number(expiry) + 3600}.${nonce}.${mac}`, // extend
      `${keyId}.${expiry}.${nonce}`,
      '',
      undefined,
    ]) {
      expect(sessions.verify(forged), String(forged)).toBeUndefined();
    }
    expect(new BrowserSessions(new ApiKeyRing(['other-key'], ['read-key'])).verify(cookieValue)).toBeUndefined();
    now += SESSION_MAX_AGE_S * 1000;
    expect(sessions.verify(cookieValue)).toBeUndefined();
  });
});
