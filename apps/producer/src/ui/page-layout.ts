import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { Principal } from '../api-keys.js';
import { CSRF_FIELD } from '../browser-session.js';

/** Rendered HTML, escaped by `hono/html` (sync or async, as `html` returns it). */
export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** Where the pages' script and styles are served. */
export const UI_ASSETS_PATH = '/ui/assets';

/** Who is looking at a page, for the header and for what it offers. */
export interface Viewer {
  /** Unset when auth is off. */
  principal?: Principal;
  /** The session's CSRF token; empty when auth is off or the request came with a bearer key. */
  csrfToken: string;
  /** True when the viewer came with a browser session (and so may sign out). */
  signedIn: boolean;
}

/** True when the viewer may act (cancel, continue, decide): auth off, or a full key. */
export function canAct(viewer: Viewer): boolean {
  return viewer.principal === undefined || viewer.principal.access === 'full';
}

/** The page shell: head with the local script and styles, the top bar, and `body`. */
export function pageLayout(title: string, viewer: Viewer, body: Html): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="csrf-token" content="${viewer.csrfToken}" />
        <title>${title} · Cairn</title>
        <link rel="stylesheet" href="${UI_ASSETS_PATH}/ui.css" />
        <script src="${UI_ASSETS_PATH}/ui.js" defer></script>
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/ui">Cairn runs</a>
          ${viewer.principal?.tenantId ? '' : html`<a href="/admin/queues">Queues</a>`}
          <a href="/ui/webhooks">Webhooks</a>
          <a href="/ui/schedules">Schedules</a>
          <span class="spacer"></span>
          ${viewer.principal?.access === 'read' ? html`<span class="badge read-only" title="this key may only read">read-only</span>` : ''}
          ${
            viewer.signedIn
              ? html`<form method="post" action="/ui/logout" class="inline">
                  <input type="hidden" name="${CSRF_FIELD}" value="${viewer.csrfToken}" />
                  <button type="submit" id="sign-out">Sign out</button>
                </form>`
              : ''
          }
        </header>
        <main>${body}</main>
      </body>
    </html>`;
}

/** A timestamp as a `<time>` element (UTC, to the second), or a dash. */
export function timeTag(iso: string | null | undefined): Html {
  if (!iso) return html`<span class="muted">–</span>`;
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

/** A run status as a coloured badge. */
export function statusBadge(status: string): Html {
  return html`<span class="status status-${status.toLowerCase()}">${status}</span>`;
}

/** JSON, pretty-printed for a `<pre>`. */
export function prettyJson(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

/** A long text folded into a `<details>` after its first `preview` characters. */
export function foldedText(text: string, preview = 160): Html {
  if (text.length <= preview && !text.includes('\n')) return html`<pre class="value">${text}</pre>`;
  const head = text.split('\n')[0]!.slice(0, preview);
  return html`<details>
    <summary><code>${head}…</code></summary>
    <pre class="value">${text}</pre>
  </details>`;
}
