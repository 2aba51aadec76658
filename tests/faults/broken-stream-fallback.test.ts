import { readFileSync } from 'node:fs';
import { modelFromSpec } from '@cairn/runtime';
import { createRegistry, researchTeamScript } from '@cairn/research-team';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '@cairn/engine/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { FLEET_BACKEND, startFleet, TEAM, type Fleet } from '../fleet/fleet.js';

/** What the worker logs, once, when its model stops streaming. */
const FALLBACK_LINE = 'asking without streaming from now on';

let fleet: Fleet | undefined;
let server: FakeOpenAIServer | undefined;
afterEach(async () => {
  await fleet?.stop();
  await server?.close();
  fleet = undefined;
  server = undefined;
});

describe(`a model server whose stream answers tool-call turns with 500 "TypeError" (${FLEET_BACKEND})`, () => {
  it('team runs complete with streaming on: the worker asks without streaming from the first broken turn and logs it once', async () => {
    server = await startFakeOpenAIServer({
      streaming: 'fails-tool-calls',
      decide: researchTeamScript,
    });
    const workerEnv = { CAIRN_MODEL: 'openai-chat:local-model', OPENAI_BASE_URL: server.url };
    const model = modelFromSpec({ model: workerEnv.CAIRN_MODEL, openaiBaseUrl: server.url });
    fleet = await startFleet({ backend: FLEET_BACKEND, registry: createRegistry({ model }) });
    const worker = await fleet.spawnWorker('a', workerEnv);

    for (const topic of ['cairns', 'trail markers']) {
      const run = await fleet.client.enqueueRun({ entity: TEAM, input: `Research '${topic}'` });
      const done = await fleet.client.waitForRun(run.runId, { timeoutMs: 60_000 });
      expect(done.status).toBe('COMPLETED');
      const view = (await fleet.client.getRun(run.runId))!;
      expect(view.content).toContain(`Top 3 results for '${topic}'`);
    }

    const log = readFileSync(worker.logFile, 'utf8');
    expect(log.split(FALLBACK_LINE).length - 1).toBe(1);
    expect(log).toContain('CAIRN_MODEL_STREAM=false');
    // Streamed until the first tool-call turn broke; that turn and every one after it asked whole.
    const streamed = server.requests.map((r) => r.body['stream'] === true);
    const firstWhole = streamed.indexOf(false);
    expect(firstWhole).toBeGreaterThan(0);
    expect(streamed.slice(firstWhole).every((s) => !s)).toBe(true);
    // One worker start and two team runs: 9 s alone at load 8; the start may take far longer
    // under a full run's load (spawnWorker allows it 90 s), the runs stay short.
  }, 120_000);
});
