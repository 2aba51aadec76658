import type { MiddlewareHandler } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import { BULL_BOARD_PATH } from './bull-board.js';

/** A Content-Security-Policy, as `hono/secure-headers` takes it. */
export type ContentSecurityPolicy = NonNullable<
  NonNullable<Parameters<typeof secureHeaders>[0]>['contentSecurityPolicy']
>;

/** Where the run pages are mounted. */
export const UI_PATH = '/ui';

/** Where the API reference page is mounted (`/docs/api`): a page like the run pages. */
export const DOCS_PATH = '/docs';

/** JSON and text answers (the API, errors, 404s, `/metrics`): a browser may load, run or frame nothing from them. */
export const API_CONTENT_SECURITY_POLICY: ContentSecurityPolicy = {
  defaultSrc: ["'none'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
};

/** The run pages load only what the producer serves: no inline script, no other origin. */
export const PAGE_CONTENT_SECURITY_POLICY: ContentSecurityPolicy = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  frameAncestors: ["'none'"],
  formAction: ["'self'"],
  baseUri: ["'none'"],
};

/**
 * Bull Board loads its scripts and styles from its own path (its page sets
 * `<base href>` there) and styles elements inline; its Google Fonts
 * stylesheet is refused, so it falls back to the system font.
 */
export const BULL_BOARD_CONTENT_SECURITY_POLICY: ContentSecurityPolicy = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  frameAncestors: ["'none'"],
  formAction: ["'self'"],
  baseUri: ["'self'"],
};

/** The headers of every answer apart from its policy: no framing (`DENY`), no sniffing; HSTS is left to the TLS proxy in front. */
function withPolicy(contentSecurityPolicy: ContentSecurityPolicy): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy,
    xFrameOptions: 'DENY',
    referrerPolicy: 'same-origin',
    strictTransportSecurity: false,
  });
}

function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * The one owner of the producer's security headers (`hono/secure-headers`):
 * `Content-Security-Policy`, `X-Frame-Options: DENY`,
 * `X-Content-Type-Options: nosniff` and the rest, on every answer, errors
 * and 404s included; the policy is the run pages' under {@link UI_PATH} and {@link DOCS_PATH},
 * Bull Board's under its path, and {@link API_CONTENT_SECURITY_POLICY}
 * everywhere else. Mount it first, so it sees every answer.
 */
export function securityHeaders(): MiddlewareHandler {
  const api = withPolicy(API_CONTENT_SECURITY_POLICY);
  const pages = withPolicy(PAGE_CONTENT_SECURITY_POLICY);
  const board = withPolicy(BULL_BOARD_CONTENT_SECURITY_POLICY);
  return (c, next) => {
    const path = c.req.path;
    const chosen =
      under(path, UI_PATH) || under(path, DOCS_PATH)
        ? pages
        : under(path, BULL_BOARD_PATH)
          ? board
          : api;
    return chosen(c, next);
  };
}
