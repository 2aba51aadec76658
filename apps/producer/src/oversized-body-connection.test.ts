import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasTestRedis, testDatabase, testRedisUrl, type TestDatabase } from '@cairn/services';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { DEFAULT_MAX_BODY_BYTES } from './app.js';
import { startProducer, type CairnProducer } from './start-producer.js';

/** curl, which CI installs (.ci/run). */
const CURL = '/usr/bin/curl';

let producer: CairnProducer | undefined;
let database: TestDatabase | undefined;
let agent: Agent | undefined;

afterEach(async () => {
  agent?.destroy();
  await producer?.close();
  await database?.drop();
  producer = undefined;
  database = undefined;
  agent = undefined;
});

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Which socket carried it: the same object for requests on one kept-alive connection. */
  socket: object;
}

function send(url: string, method: string, path: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { method, agent, headers: body === undefined ? {} : { 'Content-Type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: text,
            socket: req.socket!,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** What a client saw of its oversized POST: the status and body it read, or the error it failed with. */
type Outcome = { status: number; body: string } | { error: string };

/** Posts `body` with Node's `http` (no agent: a connection of its own). */
function postWithHttp(url: string, body: Buffer): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'POST', headers: { 'Content-Type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
        res.on('error', (error) => resolve({ error: errorText(error) }));
      },
    );
    req.on('error', (error) => resolve({ error: errorText(error) }));
    req.end(body);
  });
}

/** Posts `body` with the global `fetch` (undici). */
async function postWithFetch(url: string, body: Buffer): Promise<Outcome> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    });
    return { status: res.status, body: await res.text() };
  } catch (error) {
    return { error: errorText(error) };
  }
}

/** Posts the file at `path` with curl, as a shell user would. */
function postWithCurl(url: string, path: string): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      CURL,
      [
        '--silent',
        '--show-error',
        '--header',
        'Content-Type: application/json',
        '--data-binary',
        `@${path}`,
        '--write-out',
        '\n%{http_code}',
        url,
      ],
      { maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) return resolve({ error: `${stderr.trim() || error.message}` });
        const cut = stdout.lastIndexOf('\n');
        resolve({ status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) });
      },
    );
  });
}

/**
 * Posts `size` bytes as a client that sends its body only after
 * `100 Continue` and reads the answer only once the body is written (curl
 * does both for a large body), over a raw socket.
 */
function postAfterContinue(port: number, path: string, size: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let written = false;
    let settled = false;
    const finish = (outcome: Outcome): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(outcome);
    };
    const writeBody = async (): Promise<void> => {
      const chunk = Buffer.alloc(64 * 1024, 'x');
      for (let sent = 0; sent < size && !settled; sent += chunk.length) {
        if (!socket.write(chunk.subarray(0, Math.min(chunk.length, size - sent))))
          await new Promise((wake) => {
            socket.once('drain', wake);
            socket.once('close', wake);
          });
      }
      written = true;
    };
    socket.on('error', (error) => finish({ error: errorText(error) }));
    socket.on('data', (chunk: Buffer) => {
      const before = received;
      received += chunk.toString('latin1');
      if (!before.includes('\r\n\r\n') && received.includes('\r\n\r\n')) void writeBody();
    });
    socket.on('close', () => {
      if (!written)
        return finish({
          error: `closed after ${received.length} bytes, before the body was written`,
        });
      const answer = received.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(answer)?.[1]);
      finish({ status, body: answer.slice(answer.indexOf('\r\n\r\n') + 4) });
    });
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${size}\r\nExpect: 100-continue\r\n\r\n`,
    );
  });
}

function errorText(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  const code = (error as { code?: string }).code;
  return [String(error), code, cause === undefined ? undefined : String(cause)]
    .filter(Boolean)
    .join(' / ');
}

/** A producer on a database of its own, with `maxBodyBytes` or the default CAIRN_MAX_BODY_BYTES. */
async function start(maxBodyBytes?: number): Promise<CairnProducer> {
  database = await testDatabase();
  producer = await startProducer({
    databaseUrl: database.url,
    // On the test Redis when there is one, else on BullMQ's PostgreSQL backend.
    redisUrl: hasTestRedis() ? testRedisUrl() : undefined,
    queueName: `test-${randomUUID()}`,
    migrate: true,
    port: 0,
    ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
    logger: pino({ level: 'silent' }),
    env: {},
  });
  return producer;
}

describe('a request body over CAIRN_MAX_BODY_BYTES', () => {
  it('gets 413 with `Connection: close`, and the next request through the same keep-alive agent succeeds', async () => {
    producer = await start(1024);
    // One socket at most, kept alive: the second request goes where the first one went, as a client pool does.
    agent = new Agent({ keepAlive: true, maxSockets: 1 });

    // Large enough that the server stops reading before the upload ends, as with any real oversized upload.
    const body = JSON.stringify({ input: 'x'.repeat(2 * 1024 * 1024) });
    const tooBig = await send(producer.url, 'POST', '/v1/teams/research-team/runs', body);
    expect(tooBig.status).toBe(413);
    expect(JSON.parse(tooBig.body)).toMatchObject({ error: 'payload_too_large' });

    // Before the fix the answer said keep-alive, the agent reused the socket, and the server then closed it: ECONNRESET.
    const next = await send(producer.url, 'GET', '/healthz');
    expect(next.status).toBe(200);
    expect(tooBig.headers.connection).toBe('close');
    expect(next.socket).not.toBe(tooBig.socket);
    const after = await send(producer.url, 'GET', '/healthz');
    expect(after.status).toBe(200);
    expect(after.socket).toBe(next.socket);
  });
});

describe('a body over the default CAIRN_MAX_BODY_BYTES, posted whole by a common client', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it.each(['fetch (undici)', 'Node http', 'curl', 'a raw socket after 100 Continue'] as const)(
    '%s reads the 413 for a 2 MiB body, and the producer answers the next request',
    async (client) => {
      if (client === 'curl' && !existsSync(CURL))
        throw new Error(`${CURL} is missing: apt-get install curl (.ci/run installs it)`);
      const { url: base, port } = await start();
      const path = '/v1/teams/research-team/runs';
      const size = 2 * DEFAULT_MAX_BODY_BYTES;
      const body = Buffer.alloc(size, 'x');
      dir = mkdtempSync(join(tmpdir(), 'cairn-oversized-'));
      const file = join(dir, 'body.json');
      writeFileSync(file, body);

      // Before the fix the socket was destroyed while the client still wrote: EPIPE, `other side closed`, a reset.
      const outcome =
        client === 'fetch (undici)'
          ? await postWithFetch(`${base}${path}`, body)
          : client === 'Node http'
            ? await postWithHttp(`${base}${path}`, body)
            : client === 'curl'
              ? await postWithCurl(`${base}${path}`, file)
              : await postAfterContinue(port, path, size);

      expect(outcome).toMatchObject({ status: 413 });
      expect(JSON.parse((outcome as { body: string }).body)).toMatchObject({
        error: 'payload_too_large',
      });
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    },
  );

  it('stops reading a refused body after 8 MiB: a client still writing 32 MiB is cut off, and the producer answers the next request', async () => {
    const { url: base, port } = await start();

    const outcome = await postAfterContinue(port, '/v1/teams/research-team/runs', 32 * 1024 * 1024);

    expect(outcome).toMatchObject({ error: expect.stringMatching(/EPIPE|ECONNRESET|closed/) });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});
