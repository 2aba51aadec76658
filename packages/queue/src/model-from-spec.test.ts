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

    const config = parseEnvConfig({ DATABASE_URL: DB, CAIRN_MODEL: 'openai-chat:qwen3:8b', OPENAI_BASE_URL: server.url });
    const model = modelFromSpec(config)!;
    const { message } = await model.respond({ instructions: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }], tools: [] });

    expect(model.name).toBe('openai-chat:qwen3:8b');
    expect(message.content).toBe('Hello from a local model.');
    expect(server.requests).toMatchObject([{ path: '/v1/chat/completions', body: { model: 'qwen3:8b' } }]);
  });

  it('fails the config check naming OPENAI_API_KEY and OPENAI_BASE_URL when it would reach the OpenAI API keyless', () => {
    vi.stubEnv('OPENAI_API_KEY', undefined);
    const config = parseEnvConfig({ DATABASE_URL: DB, CAIRN_MODEL: 'openai-chat:gpt-5.4' });
    expect(() => modelFromSpec(config)).toThrow(
      /^OPENAI_API_KEY: is required for CAIRN_MODEL=openai-chat:gpt-5.4 on the OpenAI API; .*set OPENAI_BASE_URL/,
    );
  });
});
