import { html } from 'hono/html';
import { pageLayout, type Html } from './page-layout.js';

/** What the sign-in page says above its form. */
export type LoginNotice = 'none' | 'invalid-key' | 'throttled' | 'signed-out' | 'auth-off';

const NOTICES: Record<Exclude<LoginNotice, 'none'>, string> = {
  'invalid-key': 'That key is not valid.',
  throttled: 'Too many sign-in attempts from this address: wait a minute, then try again.',
  'signed-out': 'You are signed out.',
  'auth-off':
    'Sign-in is off: this producer has no API keys (CAIRN_API_KEYS), so the pages are open.',
};

/** The sign-in page: an API key field posting to `/ui/login`, then back to `next`. */
export function loginPage(next: string, notice: LoginNotice): Html {
  return pageLayout(
    'Sign in',
    { csrfToken: '', signedIn: false },
    html`<h1>Sign in</h1>
      ${notice === 'none' ? '' : html`<p class="notice notice-${notice}" id="login-notice">${NOTICES[notice]}</p>`}
      ${
        notice === 'auth-off'
          ? html`<p><a href="/ui">Open the run list</a></p>`
          : html`<form method="post" action="/ui/login" class="login" id="login-form">
                <input type="hidden" name="next" value="${next}" />
                <label
                  >API key
                  <input
                    type="password"
                    name="key"
                    autocomplete="current-password"
                    required
                    autofocus
                /></label>
                <button type="submit">Sign in</button>
              </form>
              <p class="muted">
                A key of <code>CAIRN_API_KEYS</code> may act; one of
                <code>CAIRN_READ_API_KEYS</code> may only look.
              </p>`
      }`,
  );
}
