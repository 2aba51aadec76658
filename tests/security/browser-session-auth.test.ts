import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type AppDeps } from '../../apps/producer/src/app.js';
import { ProducerMetrics } from '../../apps/producer/src/producer-metrics.js';
import { SIGN_IN_ATTEMPTS_PER_WINDOW } from '../../apps/producer/src/sign-in-throttle.js';
import {
  openProducerFixture,
  type ProducerFixture,
} from '../../apps/producer/src/test-support/producer-fixture.js';
import {
  FORM_TYPE,
  postLogin,
  sendRaw,
  serveApp,
  signIn,
  type RawResponse,
  type ServedApp,
  type SignedInBrowser,
} from './http-client.js';

const FULL = 'full-key-0123456789';
const READ = 'read-key-abcdef0123';
const SECRET = 'session-secret-0123456789abcdef0123456789';

let fx: ProducerFixture | undefined;
const served: ServedApp[] = [];
afterEach(async () => {
  for (const s of served.splice(0)) await s.close();
  await fx?.close();
  fx = undefined;
});

/** A producer app on the fixture's database and queue (a second call is another producer on the same store), served on a port. */
async function producer(deps: Partial<AppDeps> = {}): Promise<ServedApp> {
  fx ??= await openProducerFixture();
  const app = createApp({
    client: fx.client,
    queues: [fx.queue.queue],
    apiKeys: [FULL],
    readApiKeys: [READ],
    ...deps,
  });
  const s = await serveApp(app);
  served.push(s);
  return s;
}

function getRun(port: number, browser: SignedInBrowser): Promise<RawResponse> {
  return sendRaw(port, {
    method: 'GET',
    path: '/v1/runs/no-such-run',
    headers: { Cookie: browser.cookie, Accept: 'application/json' },
  });
}

function signOut(
  port: number,
  browser: SignedInBrowser,
  csrf = browser.csrf,
): Promise<RawResponse> {
  return sendRaw(port, {
    method: 'POST',
    path: '/ui/logout',
    headers: { ...FORM_TYPE, Cookie: browser.cookie },
    body: `_csrf=${encodeURIComponent(csrf)}`,
  });
}

describe('signing out of a browser session', () => {
  it('works for a read-only key as for a full one (CSRF token required), and a copy of the cookie is refused on every producer', async () => {
    const here = await producer();
    const elsewhere = await producer();
    for (const key of [READ, FULL]) {
      const browser = await signIn(here.port, key);
      expect((await getRun(elsewhere.port, browser)).status, key).toBe(404);

      const forged = await signOut(here.port, browser, 'forged');
      expect(forged.status, key).toBe(403);
      expect((await getRun(elsewhere.port, browser)).status, key).toBe(404);

      const out = await signOut(here.port, browser);
      expect(out.status, key).toBe(303);
      expect(out.headers.location).toBe('/ui/login?signed_out=1');
      expect(String(out.headers['set-cookie'])).toMatch(/cairn_session=;/);
      // The copied cookie, on the other producer of the same database.
      const copied = await getRun(elsewhere.port, browser);
      expect(copied.status, key).toBe(401);
      expect((await getRun(here.port, browser)).status, key).toBe(401);
      // Signing out again with the void cookie (a second tab, a back button) lands on sign-in too, with the cookies cleared.
      const again = await signOut(elsewhere.port, browser);
      expect(again.status, key).toBe(303);
      expect(again.headers.location).toBe('/ui/login?signed_out=1');
      expect(String(again.headers['set-cookie'])).toMatch(/cairn_session=;/);
    }
  });
});

/** Sends a request head announcing `declaredBytes` of body, then the body in chunks until the server answers; says how many body bytes went out. */
function upload(
  port: number,
  head: string,
  declaredBytes: number,
  chunked: boolean,
): Promise<{ status: number; bytesSent: number }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    let bytesSent = 0;
    let answered = false;
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const finish = () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
      socket.destroy();
      resolve({ status, bytesSent });
    };
    socket.on('data', (data: Buffer) => {
      answer += data.toString('latin1');
      if (!answered && answer.includes('\r\n\r\n')) {
        answered = true;
        finish();
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) =>
      answered
        ? undefined
        : error.code === 'EPIPE' || error.code === 'ECONNRESET'
          ? finish()
          : reject(error),
    );
    socket.on('close', () => (answered ? undefined : finish()));
    socket.on('connect', () => {
      socket.write(
        `${head}${chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${declaredBytes}`}\r\n\r\n`,
      );
      const pump = () => {
        while (!answered && !socket.destroyed && bytesSent < declaredBytes) {
          bytesSent += chunk.length;
          const framed = chunked
            ? Buffer.concat([
                Buffer.from(`${chunk.length.toString(16)}\r\n`),
                chunk,
                Buffer.from('\r\n'),
              ])
            : chunk;
          if (!socket.write(framed)) return void socket.once('drain', pump);
        }
        if (chunked && !answered && !socket.destroyed) socket.write('0\r\n\r\n');
      };
      pump();
    });
  });
}

describe('the body limit with a browser session', () => {
  it('answers 413 to an oversized form body sent with a session cookie before reading it, declared or chunked', async () => {
    const app = await producer();
    const browser = await signIn(app.port, READ);
    const total = 64 * 1024 * 1024;
    for (const [method, type] of [
      ['POST', 'application/x-www-form-urlencoded'],
      ['PUT', 'multipart/form-data; boundary=xyz'],
    ] as const) {
      for (const chunked of [false, true]) {
        const head = `${method} /v1/runs/x/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${browser.cookie}\r\nContent-Type: ${type}\r\n`;
        const { status, bytesSent } = await upload(app.port, head, total, chunked);
        const what = `${method} ${type} ${chunked ? 'chunked' : 'with Content-Length'}`;
        expect(status, what).toBe(413);
        // Read whole, all 64 MiB go out before the answer; refused at once, at most the socket buffers do.
        expect(bytesSent, what).toBeLessThan(total / 4);
      }
    }
  });
});

describe('where sign-in sends the browser next', () => {
  const injected = '/ui/%0D%0ASet-Cookie:%20pwned=1';
  it('falls back to /ui for a next path with control characters, on the form and after signing in', async () => {
    const app = await producer();
    const page = await sendRaw(app.port, {
      method: 'GET',
      path: `/ui/login?next=${encodeURIComponent('/ui/\r\nSet-Cookie: pwned=1')}`,
    });
    expect(page.status).toBe(200);
    expect(page.body).toContain('name="next" value="/ui"');
    const raw = await sendRaw(app.port, { method: 'GET', path: `/ui/login?next=${injected}` });
    expect(raw.status).toBe(200);
    expect(raw.body).toContain('name="next" value="/ui"');

    for (const next of ['/ui/\r\nSet-Cookie: pwned=1', '/ui/\u0000', '/ui/\u007f', '/ui/\u2028']) {
      const res = await postLogin(app.port, FULL, { next });
      expect(res.status, JSON.stringify(next)).toBe(303);
      expect(res.headers.location).toBe('/ui');
      expect(String(res.headers['set-cookie'])).not.toContain('pwned');
    }
    expect(
      (await postLogin(app.port, FULL, { next: '/ui/runs/abc?page=2' })).headers.location,
    ).toBe('/ui/runs/abc?page=2');

    const redirected = await sendRaw(app.port, {
      method: 'GET',
      path: '/ui/runs/%0D%0ASet-Cookie:%20pwned=1',
      headers: { Accept: 'text/html' },
    });
    expect(redirected.status).toBe(303);
    expect(redirected.headers.location).toMatch(/^\/ui\/login\?next=[^\r\n]*$/);
  });
});

describe('sign-in attempts', () => {
  it(`are throttled per client address after ${SIGN_IN_ATTEMPTS_PER_WINDOW} failures: 429 with Retry-After, even with the right key; other addresses still sign in`, async () => {
    const metrics = new ProducerMetrics();
    const app = await producer({ metrics });
    const attacker = '127.0.0.2';
    for (let i = 0; i < SIGN_IN_ATTEMPTS_PER_WINDOW; i++) {
      expect((await postLogin(app.port, `wrong-${i}`, { localAddress: attacker })).status).toBe(
        401,
      );
    }
    const throttled = await postLogin(app.port, FULL, { localAddress: attacker });
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(throttled.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(throttled.body).toContain('Too many sign-in attempts');
    expect(throttled.headers['set-cookie']).toBeUndefined();

    // Another address, and successful sign-ins, are not held back.
    for (let i = 0; i < SIGN_IN_ATTEMPTS_PER_WINDOW + 2; i++) {
      expect((await postLogin(app.port, FULL, { localAddress: '127.0.0.3' })).status).toBe(303);
    }
    const text = await metrics.render();
    expect(text).toContain(
      `cairn_auth_failures_total{reason="bad_key"} ${SIGN_IN_ATTEMPTS_PER_WINDOW}`,
    );
    expect(text).toContain('cairn_auth_failures_total{reason="throttled"} 1');
  });
});

describe('authentication failures', () => {
  it('are counted by reason in cairn_auth_failures_total', async () => {
    const metrics = new ProducerMetrics();
    const app = await producer({ metrics });
    const get = (headers: Record<string, string>) =>
      sendRaw(app.port, { method: 'GET', path: '/v1/runs/x', headers });
    expect((await get({ Authorization: 'Bearer nope' })).status).toBe(401);
    expect((await get({ Authorization: 'Bearer nope-2' })).status).toBe(401);
    expect((await get({ Authorization: 'Basic abc' })).status).toBe(401);
    expect((await get({ Cookie: 'cairn_session=a.b.c.d' })).status).toBe(401);
    expect((await get({})).status).toBe(401);
    const browser = await signIn(app.port, FULL);
    const noCsrf = await sendRaw(app.port, {
      method: 'POST',
      path: '/v1/runs/x/cancel',
      headers: { Cookie: browser.cookie },
    });
    expect(noCsrf.status).toBe(403);
    const text = await metrics.render();
    for (const [reason, count] of [
      ['bad_key', 2],
      ['malformed_header', 1],
      ['bad_session', 1],
      ['missing', 1],
      ['csrf', 1],
      ['throttled', 0],
    ] as const) {
      expect(text, reason).toContain(`cairn_auth_failures_total{reason="${reason}"} ${count}`);
    }
  });
});

describe('CAIRN_SESSION_SECRET', () => {
  it('keeps sessions across a restart with an added key; rotating it signs them out; without it an added key signs them out', async () => {
    const before = await producer({ sessionSecret: SECRET });
    const browser = await signIn(before.port, READ);
    expect((await getRun(before.port, browser)).status).toBe(404);

    const withAddedKey = await producer({
      apiKeys: [FULL, 'acme:new-key-0123456789'],
      sessionSecret: SECRET,
    });
    expect((await getRun(withAddedKey.port, browser)).status).toBe(404);
    const rotated = await producer({
      apiKeys: [FULL, 'acme:new-key-0123456789'],
      sessionSecret: `${SECRET}-rotated`,
    });
    expect((await getRun(rotated.port, browser)).status).toBe(401);

    // Without a secret, the keys sign sessions: the same keys accept them, an added key ends them.
    const derived = await producer();
    const other = await signIn(derived.port, READ);
    expect((await getRun((await producer()).port, other)).status).toBe(404);
    expect(
      (await getRun((await producer({ apiKeys: [FULL, 'acme:new-key-0123456789'] })).port, other))
        .status,
    ).toBe(401);
  });
});
