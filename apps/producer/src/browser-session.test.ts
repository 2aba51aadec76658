import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyRing } from './api-keys.js';
import { BrowserSessions, SESSION_MAX_AGE_S } from './browser-session.js';
import { openProducerFixture, type ProducerFixture } from './test-support/producer-fixture.js';

describe('browser sessions', () => {
  const keys = new ApiKeyRing(['full-key'], ['read-key']);
  // Revocations live in the store (real Postgres), shared by every producer on it.
  let fixture: ProducerFixture;
  beforeAll(async () => {
    fixture = await openProducerFixture();
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('round-trips a session whose cookie holds no key, with its access and CSRF token', async () => {
    const sessions = new BrowserSessions(keys, fixture.client);
    const issued = sessions.issue(keys.find('read-key')!);
    expect(issued.cookieValue).not.toContain('read-key');
    expect(await sessions.verify(issued.cookieValue)).toEqual({
      principal: issued.principal,
      csrfToken: issued.csrfToken,
      nonce: issued.nonce,
      expiresAt: issued.expiresAt,
    });
    expect(issued.principal.access).toBe('read');
    expect(sessions.csrfMatches(issued, issued.csrfToken)).toBe(true);
    expect(sessions.csrfMatches(issued, `${issued.csrfToken.slice(0, -1)}x`)).toBe(false);
    expect(sessions.csrfMatches(issued, undefined)).toBe(false);
  });

  it('refuses a tampered, truncated, expired or foreign cookie, and one whose key is no longer configured', async () => {
    let now = Date.now();
    const sessions = new BrowserSessions(keys, fixture.client, () => now);
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
      expect(await sessions.verify(forged), String(forged)).toBeUndefined();
    }
    expect(
      await new BrowserSessions(new ApiKeyRing(['other-key'], ['read-key']), fixture.client).verify(
        cookieValue,
      ),
    ).toBeUndefined();
    now += SESSION_MAX_AGE_S * 1000;
    expect(await sessions.verify(cookieValue)).toBeUndefined();
  });

  it('refuses a signed-out session on every producer of the store, and only that session', async () => {
    const here = new BrowserSessions(keys, fixture.client);
    const elsewhere = new BrowserSessions(keys, fixture.client);
    const signedOut = here.issue(keys.find('full-key')!);
    const other = here.issue(keys.find('full-key')!);
    await here.revoke((await here.verify(signedOut.cookieValue))!);
    await here.revoke(signedOut); // twice is harmless
    expect(await here.verify(signedOut.cookieValue)).toBeUndefined();
    expect(await elsewhere.verify(signedOut.cookieValue)).toBeUndefined();
    expect(await elsewhere.verify(other.cookieValue)).toMatchObject({ nonce: other.nonce });
  });
});
