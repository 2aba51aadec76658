import { startFakeOpenAIServer, type FakeOpenAIServer } from '@cairn/engine/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseEnvConfig } from './env-config.js';
import { modelFromSpec } from './load-registry.js';

const DB = 'postgres://u:p@localhost:5432/cairn';

let server: FakeOpenAIServer | undefined;

afterEach(async () => {
  vi.unstubAllEnvs();
  await server?.close();
  server = undefined;
});

describe('CAIRN_MODEL=openai-chat:<model> without OPENAI_API_KEY', () => {
  it('talks to the OpenAI-compatible server at OPENAI_BASE_URL, which needs no key', async () => {
    // The openai client would read the key from here: make sure there is none, as on a machine with a local server only.
    vi.stubEnv('OPENAI_API_KEY', undefined);
    server = await startFakeOpenAIServer();
    server.enqueue({ kind: 'text', text: 'Hello from a local model.' });

    const config = parseEnvConfig({
      DATABASE_URL: DB,
      CAIRN_MODEL: 'openai-chat:qwen3:8b',
      OPENAI_BASE_URL: server.url,
    });
    const model = modelFromSpec(config)!;
    const { message } = await model.respond({
      instructions: 'Be brief.',
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [],
    });

    expect(model.name).toBe('openai-chat:qwen3:8b');
    expect(message.content).toBe('Hello from a local model.');
    expect(server.requests).toMatchObject([
      { path: '/v1/chat/completions', body: { model: 'qwen3:8b' } },
    ]);
  });

  it('fails the config check naming OPENAI_API_KEY and OPENAI_BASE_URL when it would reach the OpenAI API keyless', () => {
    vi.stubEnv('OPENAI_API_KEY', undefined);
    const config = parseEnvConfig({ DATABASE_URL: DB, CAIRN_MODEL: 'openai-chat:gpt-5.4' });
    expect(() => modelFromSpec(config)).toThrow(
      /^OPENAI_API_KEY: is required for CAIRN_MODEL=openai-chat:gpt-5.4 on the OpenAI API; .*set OPENAI_BASE_URL/,
    );
  });
});

describe('CAIRN_MODEL_STREAM', () => {
  const ask = {
    instructions: '',
    messages: [{ role: 'user' as const, content: 'Hi' }],
    tools: [],
    onDelta: () => undefined,
  };

  it.each(['openai-chat:qwen3:8b', 'openai:gpt-test'])(
    '=false: %s never asks the server to stream, even for a turn that takes live deltas',
    async (spec) => {
      server = await startFakeOpenAIServer();
      server.enqueue({ kind: 'text', text: 'Whole.' }, { kind: 'text', text: 'Streamed.' });
      const env = {
        DATABASE_URL: DB,
        CAIRN_MODEL: spec,
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: server.url,
      };

      const off = modelFromSpec(parseEnvConfig({ ...env, CAIRN_MODEL_STREAM: 'false' }))!;
      expect((await off.respond(ask)).message.content).toBe('Whole.');
      const on = modelFromSpec(parseEnvConfig(env))!;
      expect((await on.respond(ask)).message.content).toBe('Streamed.');

      expect(server.requests.map((r) => r.body['stream'])).toEqual([undefined, true]);
    },
  );

  it('fails the config check naming CAIRN_MODEL_STREAM on a value that is not a boolean', () => {
    expect(() => parseEnvConfig({ DATABASE_URL: DB, CAIRN_MODEL_STREAM: 'off' })).toThrow(
      /^CAIRN_MODEL_STREAM: must be 1, 0, true or false/,
    );
  });
});
