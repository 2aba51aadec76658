import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { randomUUID } from 'node:crypto';
import { hasTestRedis, testDatabase, testRedisUrl, type TestDatabase } from '@cairn/services';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { startProducer, type CairnProducer } from './start-producer.js';

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

describe('a request body over CAIRN_MAX_BODY_BYTES', () => {
  it('gets 413 with `Connection: close`, and the next request through the same keep-alive agent succeeds', async () => {
    database = await testDatabase();
    producer = await startProducer({
      databaseUrl: database.url,
      // On the test Redis when there is one, else on BullMQ's PostgreSQL backend.
      redisUrl: hasTestRedis() ? testRedisUrl() : undefined,
      queueName: `test-${randomUUID()}`,
      migrate: true,
      port: 0,
      maxBodyBytes: 1024,
      logger: pino({ level: 'silent' }),
      env: {},
    });
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
