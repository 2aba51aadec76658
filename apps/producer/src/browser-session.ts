import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKeyRing, Principal } from './api-keys.js';

/** Name of the HttpOnly cookie that holds a signed browser session. */
export const SESSION_COOKIE = 'cairn_session';

/**
 * Name of the readable cookie that holds the session's CSRF token; Bull
 * Board's client (axios) sends it back as the `X-XSRF-TOKEN` header.
 */
export const CSRF_COOKIE = 'XSRF-TOKEN';

/** Headers a page's write may carry its CSRF token in. */
export const CSRF_HEADERS: readonly string[] = ['X-CSRF-Token', 'X-XSRF-TOKEN'];

/** Form field a page's form may carry its CSRF token in. */
export const CSRF_FIELD = '_csrf';

/** How long a browser session lasts, in seconds. */
export const SESSION_MAX_AGE_S = 12 * 60 * 60;

/** A verified browser session. */
export interface BrowserSession {
  principal: Principal;
  /** The token every write of this session must carry. */
  csrfToken: string;
  /** The session's own random id, which a sign-out revokes. */
  nonce: string;
  /** When its cookie stops being valid by itself. */
  expiresAt: Date;
}

/** Where signed-out sessions are kept, shared by every producer (the store, through the producer's client). */
export interface SessionRevocations {
  revokeBrowserSession(nonce: string, expiresAt: Date): Promise<void>;
  isBrowserSessionRevoked(nonce: string): Promise<boolean>;
}

/** A session just issued, with the cookie value to set. */
export interface IssuedSession extends BrowserSession {
  cookieValue: string;
}

/**
 * Browser sessions as signed cookies: the value is `keyId.expiry.nonce.mac`,
 * an HMAC under the key ring's secret, so it holds no key and cannot be
 * forged or extended; a session whose key is no longer configured is void,
 * and so is one signed out ({@link BrowserSessions.revoke}: its nonce is
 * kept in the store until the cookie's expiry, so a copy of the cookie opens
 * nothing on any producer). The CSRF token is an HMAC of the session's nonce.
 */
export class BrowserSessions {
  constructor(
    private readonly keys: ApiKeyRing,
    private readonly revocations: SessionRevocations,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts a session for a principal found by the key ring. */
  issue(principal: Principal): IssuedSession {
    const expiresAt = Math.floor(this.now() / 1000) + SESSION_MAX_AGE_S;
    const nonce = randomBytes(16).toString('base64url');
    const payload = `${principal.keyId}.${expiresAt}.${nonce}`;
    return {
      principal,
      csrfToken: this.csrfTokenOf(nonce),
      nonce,
      expiresAt: new Date(expiresAt * 1000),
      cookieValue: `${payload}.${this.mac(payload)}`,
    };
  }

  /** Signs the session out: its cookie is refused from now on, wherever it is presented. */
  revoke(session: BrowserSession): Promise<void> {
    return this.revocations.revokeBrowserSession(session.nonce, session.expiresAt);
  }

  /** The session a cookie value stands for, or undefined when it is malformed, tampered with, expired, signed out or its key is gone. */
  async verify(cookieValue: string | undefined): Promise<BrowserSession | undefined> {
    const parts = cookieValue?.split('.');
    if (parts?.length !== 4) return undefined;
    const [keyId, expiresAt, nonce, mac] = parts as [string, string, string, string];
    const expected = Buffer.from(this.mac(`${keyId}.${expiresAt}.${nonce}`));
    const presented = Buffer.from(mac);
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected))
      return undefined;
    if (!/^\d+$/.test(expiresAt) || Number(expiresAt) * 1000 <= this.now()) return undefined;
    const principal = this.keys.byKeyId(keyId);
    if (!principal || (await this.revocations.isBrowserSessionRevoked(nonce))) return undefined;
    return {
      principal,
      csrfToken: this.csrfTokenOf(nonce),
      nonce,
      expiresAt: new Date(Number(expiresAt) * 1000),
    };
  }

  /** True when `token` is the session's CSRF token (constant time). */
  csrfMatches(session: BrowserSession, token: string | undefined): boolean {
    if (!token) return false;
    const expected = Buffer.from(session.csrfToken);
    const presented = Buffer.from(token);
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  }

  private csrfTokenOf(nonce: string): string {
    return createHmac('sha256', this.keys.secret).update(`csrf\0${nonce}`).digest('base64url');
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.keys.secret).update(`session\0${payload}`).digest('base64url');
  }
}
