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
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
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
    const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        method: req.method,
        path: req.path,
        // A fresh connection per request: a reused socket the server just closed would look like a hang-up.
        agent: false,
        headers: { ...(body ? { 'Content-Length': String(body.length) } : {}), ...req.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
