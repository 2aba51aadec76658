import OpenAI, { APIError } from 'openai';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type FakeOpenAIServerOptions,
} from './fake-openai-server.js';

/** The window of the one test that waits for it to move; the others keep the default minute, so a slow machine cannot let a request through. */
const WINDOW_MS = 1_000;

let server: FakeOpenAIServer | undefined;
let client: OpenAI;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: FakeOpenAIServerOptions): Promise<FakeOpenAIServer> {
  server = await startFakeOpenAIServer(options);
  client = new OpenAI({ apiKey: 'local', baseURL: server.url, maxRetries: 0 });
  return server;
}

/** One chat completion for `model`: its text, or the APIError it failed with. */
function ask(model: string, stream = false): Promise<string | APIError> {
  const messages = [{ role: 'user' as const, content: 'Hi' }];
  const answer = stream
    ? client.chat.completions
        .stream({ model, messages })
        .finalChatCompletion()
        .then((completion) => completion.choices[0]?.message.content ?? '')
    : client.chat.completions
        .create({ model, messages })
        .then((completion) => completion.choices[0]?.message.content ?? '');
  return answer.catch((error: unknown) => {
    if (error instanceof APIError) return error;
    throw error;
  });
}

function rateLimited(answer: string | APIError): APIError {
  expect(answer).toBeInstanceOf(APIError);
  const error = answer as APIError;
  expect(error.status).toBe(429);
  expect(error.code).toBe('rate_limit_exceeded');
  expect(error.headers?.get('x-should-retry')).toBe('true');
  return error;
}

describe('fake OpenAI server quota', () => {
  it('refuses the (N+1)-th request of a window with a 429 and its headers, and lets one through once the window has moved', async () => {
    const fake = await start({
      quota: { perModel: { 'gpt-q': { requestsPerMinute: 2 } }, windowMs: WINDOW_MS },
    });
    fake.enqueue({ kind: 'text', text: 'one' }, { kind: 'text', text: 'two' });
    fake.enqueue({ kind: 'text', text: 'three' });

    expect(await ask('gpt-q')).toBe('one');
    expect(await ask('gpt-q', true)).toBe('two');
    const error = rateLimited(await ask('gpt-q'));

    expect(error.message).toMatch(
      /Rate limit reached for gpt-q .* requests per min \(RPM\): Limit 2, Used 2/,
    );
    expect(error.type).toBe('requests');
    const headers = error.headers!;
    expect(headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(headers.get('x-ratelimit-limit-tokens')).toBeNull();
    const retryAfterMs = Number(headers.get('retry-after-ms'));
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(WINDOW_MS);
    expect(headers.get('retry-after')).toBe(String(Math.ceil(retryAfterMs / 1_000)));
    expect(headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+ms|\d+(\.\d+)?s)$/);

    // A fixed time: the quota window under test must pass.
    await sleep(retryAfterMs);
    expect(await ask('gpt-q')).toBe('three');
    expect(fake.quota.accepted('gpt-q')).toBe(3);
    expect(fake.quota.rejected('gpt-q')).toBe(1);
    expect(fake.requests).toHaveLength(4);
  });

  it('counts tokens as the reply usage total and refuses what would pass tokens per minute', async () => {
    const fake = await start({
      quota: { perModel: { 'gpt-q': { tokensPerMinute: 100 } } },
    });
    fake.enqueue(
      { kind: 'text', text: 'a', usage: { input: 50, output: 10 } },
      { kind: 'text', text: 'b', usage: { input: 30, output: 11 } },
      { kind: 'text', text: 'c', usage: { input: 30, output: 10 } },
    );

    expect(await ask('gpt-q')).toBe('a');
    const error = rateLimited(await ask('gpt-q'));
    expect(error.type).toBe('tokens');
    expect(error.message).toContain('Limit 100, Used 60, Requested 41');
    expect(error.headers?.get('x-ratelimit-limit-tokens')).toBe('100');
    expect(error.headers?.get('x-ratelimit-remaining-tokens')).toBe('40');
    expect(error.headers?.get('x-ratelimit-reset-tokens')).not.toBe('0s');

    // The refused reply is still queued: it is the next one answered, once the window has room.
    fake.setQuota('gpt-q', { tokensPerMinute: 101 });
    expect(await ask('gpt-q')).toBe('b');
    expect(fake.quota.tokens('gpt-q')).toBe(101);
    expect(fake.quota.accepted('gpt-q')).toBe(2);
    expect(fake.quota.rejected('gpt-q')).toBe(1);
  });

  it('refuses a request past the concurrency limit while the others are being answered', async () => {
    const fake = await start({
      quota: { perModel: { 'gpt-q': { concurrency: 2 } } },
      latencyMs: 1_000,
    });
    fake.enqueue(
      { kind: 'text', text: 'a' },
      { kind: 'text', text: 'b' },
      { kind: 'text', text: 'c' },
    );

    const first = ask('gpt-q');
    const second = ask('gpt-q', true);
    await waitFor(() => fake.quota.accepted('gpt-q') === 2);
    const error = rateLimited(await ask('gpt-q'));
    expect(error.message).toContain('concurrent requests: Limit 2, In flight 2');
    expect(Number(error.headers?.get('retry-after-ms'))).toBeGreaterThan(0);

    expect([await first, await second]).toEqual(['a', 'b']);
    expect(await ask('gpt-q')).toBe('c');
    expect(fake.quota.rejected('gpt-q')).toBe(1);
  });

  it('frees a concurrency slot when the client goes away', async () => {
    const fake = await start({ quota: { perModel: { 'gpt-q': { concurrency: 1 } } } });
    fake.enqueue({ kind: 'hang' }, { kind: 'text', text: 'after' });
    const controller = new AbortController();
    const hung = client.chat.completions
      .create(
        { model: 'gpt-q', messages: [{ role: 'user', content: 'Hi' }] },
        { signal: controller.signal },
      )
      .catch((error: unknown) => error);
    await waitFor(() => fake.quota.accepted('gpt-q') === 1);
    rateLimited(await ask('gpt-q'));

    controller.abort();
    await hung;
    await waitFor(async () => (await ask('gpt-q')) === 'after');
  });

  it('applies a quota lowered mid-run with setQuota, the window it already counted included', async () => {
    const fake = await start({
      quota: { perModel: { 'gpt-q': { requestsPerMinute: 4 } } },
    });
    fake.enqueue(...['a', 'b', 'c'].map((text) => ({ kind: 'text' as const, text })));

    expect(await ask('gpt-q')).toBe('a');
    expect(await ask('gpt-q')).toBe('b');
    fake.setQuota('gpt-q', { requestsPerMinute: 2 });
    const error = rateLimited(await ask('gpt-q'));
    expect(error.headers?.get('x-ratelimit-limit-requests')).toBe('2');

    fake.setQuota('gpt-q', undefined);
    expect(await ask('gpt-q')).toBe('c');
  });

  it('leaves other models alone: another limited model and a model not listed', async () => {
    const fake = await start({
      quota: {
        perModel: { 'gpt-q': { requestsPerMinute: 1 }, 'gpt-r': { requestsPerMinute: 1 } },
      },
    });
    fake.enqueue(...['a', 'b', 'c', 'd', 'e'].map((text) => ({ kind: 'text' as const, text })));

    expect(await ask('gpt-q')).toBe('a');
    rateLimited(await ask('gpt-q'));
    expect(await ask('gpt-r')).toBe('b');
    expect(await ask('free')).toBe('c');
    expect(await ask('free')).toBe('d');
    expect(await ask('free')).toBe('e');

    expect(['gpt-q', 'gpt-r', 'free'].map((m) => fake.quota.accepted(m))).toEqual([1, 1, 3]);
    expect(['gpt-q', 'gpt-r', 'free'].map((m) => fake.quota.rejected(m))).toEqual([1, 0, 0]);
    expect(fake.quota.accepted('never-asked')).toBe(0);
    expect(fake.quota.acceptedAt('never-asked')).toEqual([]);
  });

  it('keeps a ledger of accepted receipt times and tokens', async () => {
    const fake = await start({
      quota: { perModel: { 'gpt-q': { requestsPerMinute: 10 } } },
    });
    fake.enqueue(
      { kind: 'text', text: 'a', usage: { input: 5, output: 2 } },
      { kind: 'error', status: 500, message: 'boom' },
      {
        kind: 'tool_calls',
        calls: [{ name: 'search', arguments: {} }],
        usage: { input: 8, output: 3 },
      },
    );
    const before = Date.now();

    await ask('gpt-q');
    await ask('gpt-q');
    await ask('gpt-q', true);

    const times = fake.quota.acceptedAt('gpt-q');
    expect(times).toHaveLength(3);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times[0]).toBeGreaterThanOrEqual(before);
    expect(times[2]).toBeLessThanOrEqual(Date.now());
    expect(fake.quota.tokens('gpt-q')).toBe(7 + 0 + 11);
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}
