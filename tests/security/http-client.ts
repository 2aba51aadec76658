import { request } from 'node:http';
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';

/** An answer as the wire carried it. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request, byte for byte: the path is sent as given (no URL normalisation), the body as given. */
export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The client address to send from (any 127.x.y.z reaches the server as that client). @defaultValue the system's choice */
  localAddress?: string;
}

/** A Hono app served over real HTTP on a free port. */
export interface ServedApp {
  port: number;
  send(req: RawRequest): Promise<RawResponse>;
  close(): Promise<void>;
}

/** Serves `app` on 127.0.0.1 and returns a raw HTTP client for it. */
export async function serveApp(app: Hono): Promise<ServedApp> {
  let server!: ServerType;
  const port = await new Promise<number>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
      resolve(info.port),
    );
  });
  return {
    port,
    send: (req) => sendRaw(port, req),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Sends one raw request to 127.0.0.1:`port`. */
export function sendRaw(port: number, req: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const body =
      req.body === undefined
        ? undefined
        : Buffer.isBuffer(req.body)
          ? req.body
          : Buffer.from(req.body);
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        method: req.method,
        path: req.path,
        // A fresh connection per request: a reused socket the server just closed would look like a hang-up.
        agent: false,
        localAddress: req.localAddress,
        headers: { ...(body ? { 'Content-Length': String(body.length) } : {}), ...req.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The `Content-Type` of a form post. */
export const FORM_TYPE = { 'Content-Type': 'application/x-www-form-urlencoded' } as const;

/** A signed-in browser: its `Cookie` header and its CSRF token. */
export interface SignedInBrowser {
  cookie: string;
  csrf: string;
}

/** Posts the sign-in form with `key` (and `next`), from `localAddress` when given. */
export function postLogin(
  port: number,
  key: string,
  options: { next?: string; localAddress?: string } = {},
): Promise<RawResponse> {
  const form = new URLSearchParams({
    key,
    ...(options.next === undefined ? {} : { next: options.next }),
  });
  return sendRaw(port, {
    method: 'POST',
    path: '/ui/login',
    headers: FORM_TYPE,
    body: form.toString(),
    localAddress: options.localAddress,
  });
}

/** The cookies an answer sets, as `name=value` pairs. */
export function setCookies(res: RawResponse): string[] {
  return ((res.headers['set-cookie'] as string[] | undefined) ?? []).map((c) => c.split(';')[0]!);
}

/** Signs in with `key` at `/ui/login`: the browser's cookie and CSRF token, or an error naming the answer. */
export async function signIn(port: number, key: string): Promise<SignedInBrowser> {
  const res = await postLogin(port, key);
  const cookies = setCookies(res);
  const csrf = cookies.find((c) => c.startsWith('XSRF-TOKEN='))?.slice('XSRF-TOKEN='.length);
  if (res.status !== 303 || csrf === undefined)
    throw new Error(`sign-in answered ${res.status}: ${res.body.slice(0, 200)}`);
  return { cookie: cookies.join('; '), csrf };
}
