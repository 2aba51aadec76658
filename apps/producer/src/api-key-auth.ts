import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import type { ApiKeyRing, Principal } from './api-keys.js';
import {
  CSRF_FIELD,
  CSRF_HEADERS,
  SESSION_COOKIE,
  type BrowserSession,
  type BrowserSessions,
} from './browser-session.js';
import { formBody } from './form-body.js';
import { ForbiddenError, UnauthorizedError } from './errors.js';
import type { AuthFailureReason } from './producer-metrics.js';
import { safeNextPath } from './next-path.js';

/** Paths that never need a key (`/readyz`: probes send none; it shows why a dependency failed to admin keys only). */
export const OPEN_PATHS: readonly string[] = ['/healthz', '/readyz', '/ui/login'];

/** Path prefixes that never need a key (the pages' script and styles). */
export const OPEN_PATH_PREFIXES: readonly string[] = ['/ui/assets/'];

/** Paths a browser opens: without a session, a page request there is sent to `/ui/login`. */
export const BROWSER_PATH_PREFIXES: readonly string[] = ['/ui', '/admin/queues', '/docs'];

/** Methods a read-only key may use. */
export const READ_METHODS: readonly string[] = ['GET', 'HEAD'];

/** Where sign-in lives. */
export const LOGIN_PATH = '/ui/login';

/** Where a browser signs out: any session may post there (with its CSRF token), a read-only one included. */
export const LOGOUT_PATH = '/ui/logout';

/** Options of {@link apiKeyAuth}. */
export interface ApiKeyAuthOptions {
  /** Called for each request refused for its credentials (`ProducerMetrics.recordAuthFailure`). */
  onFailure?: (reason: AuthFailureReason) => void;
}

declare module 'hono' {
  interface ContextVariableMap {
    /** Who the request speaks for; unset when auth is off. */
    principal: Principal;
    /** The browser session the request came with, when it came with one instead of a bearer key. */
    browserSession: BrowserSession;
  }
}

const BEARER = /^Bearer\s+(.+)$/i;

/**
 * Requires, on every path but the open ones, either `Authorization: Bearer
 * <key>` or a browser session cookie (see `BrowserSessions`), both resolved
 * through the key ring. A write from a browser session must carry the
 * session's CSRF token (header or form field), or it is a 403 before any
 * route runs. A read-only key may only GET and HEAD (anything else is 403),
 * but signing out ({@link LOGOUT_PATH}). A page request without either is
 * redirected to {@link LOGIN_PATH}; any other is a 401. With no keys at all,
 * every request passes. Mount it after the body limit: a form's CSRF field is
 * read from the body.
 */
export function apiKeyAuth(
  keys: ApiKeyRing,
  sessions: BrowserSessions,
  options: ApiKeyAuthOptions = {},
): MiddlewareHandler {
  const refuse = <E extends Error>(reason: AuthFailureReason, error: E): E => {
    options.onFailure?.(reason);
    return error;
  };
  return async (c, next) => {
    const path = c.req.path;
    if (!keys.enabled) return next();
    if (OPEN_PATHS.includes(path) || OPEN_PATH_PREFIXES.some((p) => path.startsWith(p))) {
      // A key is optional here; a valid one still names who asks (`/readyz` shows an admin why a dependency failed).
      const presented = BEARER.exec(c.req.header('Authorization') ?? '')?.[1]?.trim();
      const found = presented ? keys.find(presented) : undefined;
      if (found) c.set('principal', found);
      return next();
    }
    const isWrite = !READ_METHODS.includes(c.req.method);
    const signsOut = c.req.method === 'POST' && path === LOGOUT_PATH;
    const authorization = c.req.header('Authorization');
    let principal: Principal;
    if (authorization !== undefined) {
      const match = BEARER.exec(authorization);
      if (!match?.[1])
        throw refuse('malformed_header', new UnauthorizedError('missing bearer API key'));
      const found = keys.find(match[1].trim());
      if (!found) throw refuse('bad_key', new UnauthorizedError('invalid API key'));
      principal = found;
    } else {
      const cookie = getCookie(c, SESSION_COOKIE);
      const session = await sessions.verify(cookie);
      // Signing out with a cookie that is already void (expired, signed out, its key gone) has nothing to revoke:
      // the route clears the cookies and sends the browser to sign-in, as for a live session.
      if (!session && signsOut) return next();
      if (!session) {
        const page = !isWrite && wantsPage(c);
        // A page opened without a session is how sign-in starts, not a failure; a bad cookie is one either way.
        if (cookie !== undefined || !page)
          options.onFailure?.(cookie === undefined ? 'missing' : 'bad_session');
        if (page)
          return c.redirect(
            `${LOGIN_PATH}?next=${encodeURIComponent(safeNextPath(pathAndQuery(c)))}`,
            303,
          );
        throw new UnauthorizedError('missing bearer API key');
      }
      if (isWrite && !sessions.csrfMatches(session, await presentedCsrfToken(c))) {
        throw refuse(
          'csrf',
          new ForbiddenError(
            'missing or invalid CSRF token: a write from a page must carry its session token',
          ),
        );
      }
      c.set('browserSession', session);
      principal = session.principal;
    }
    if (isWrite && principal.access !== 'full' && !signsOut) {
      throw new ForbiddenError(`this API key may only read (${READ_METHODS.join(', ')})`);
    }
    c.set('principal', principal);
    return next();
  };
}

/** True for a browser asking for a page under {@link BROWSER_PATH_PREFIXES}. */
function wantsPage(c: Context): boolean {
  const path = c.req.path;
  const underBrowserPath = BROWSER_PATH_PREFIXES.some(
    (p) => path === p || path.startsWith(`${p}/`),
  );
  return underBrowserPath && (c.req.header('Accept') ?? '').includes('text/html');
}

function pathAndQuery(c: Context): string {
  const url = new URL(c.req.url);
  return `${url.pathname}${url.search}`;
}

/** The CSRF token from a header, or from the form field of a form post (the parsed form stays readable by the route). */
async function presentedCsrfToken(c: Context): Promise<string | undefined> {
  for (const name of CSRF_HEADERS) {
    const value = c.req.header(name);
    if (value) return value;
  }
  const type = c.req.header('Content-Type') ?? '';
  if (
    !type.startsWith('application/x-www-form-urlencoded') &&
    !type.startsWith('multipart/form-data')
  )
    return undefined;
  const field = (await formBody(c))[CSRF_FIELD];
  return typeof field === 'string' ? field : undefined;
}

/** The principal of a request when auth is off: an admin with every right. */
export const OPEN_PRINCIPAL: Principal = Object.freeze({
  access: 'full',
  tenantId: null,
  keyId: 'open',
});

/** The request's principal ({@link OPEN_PRINCIPAL} when auth is off, or on an open path asked without a valid key). */
export function requestPrincipal(c: Context): Principal {
  return c.get('principal') ?? OPEN_PRINCIPAL;
}

/** True when `principal` may see a resource owned by `tenantId`: an admin sees all, a tenant its own. */
export function mayAccess(principal: Principal, tenantId: string | null): boolean {
  return principal.tenantId === null || principal.tenantId === tenantId;
}

/** True when the request may see what spans every tenant: auth is off, or it came with an admin key (on an open path too). */
export function isAdminRequest(c: Context, keys: ApiKeyRing): boolean {
  const principal = c.get('principal') as Principal | undefined;
  return !keys.enabled || principal?.tenantId === null;
}

/** Refuses (403) a request whose principal is bound to a tenant: for routes that span every tenant (Bull Board). */
export function adminOnly(what: string): MiddlewareHandler {
  return async (c, next) => {
    if (requestPrincipal(c).tenantId !== null) {
      throw new ForbiddenError(`${what} needs an admin key (this key is bound to a tenant)`);
    }
    return next();
  };
}
