import { modelFromSpec } from '@cairn/runtime';
import { createRegistry, researchTeamScript } from '@cairn/research-team';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type FakeStreaming,
} from '@cairn/engine/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  allTools,
  FLEET_BACKEND,
  holderOf,
  startFleet,
  TEAM,
  waitFor,
  type Fleet,
} from '../fleet/fleet.js';

const CASES: {
  name: string;
  streaming: FakeStreaming;
  env: Record<string, string>;
  stream: true | undefined;
}[] = [
  {
    name: "CAIRN_MODEL_STREAM=false, on a server whose stream drops tool calls (as @dwmkerr/mock-llm's does)",
    streaming: 'text-only',
    env: { CAIRN_MODEL_STREAM: 'false' },
    stream: undefined,
  },
  {
    name: 'streaming on, on a server that answers stream: true with whole JSON completions',
    streaming: 'never',
    env: {},
    stream: true,
  },
];

describe.each(CASES)(
  `SIGKILL a worker on an OpenAI-compatible server that does not stream (${FLEET_BACKEND}): $name`,
  ({ streaming, env, stream }) => {
    let fleet: Fleet | undefined;
    let server: FakeOpenAIServer | undefined;
    afterEach(async () => {
      await fleet?.stop();
      await server?.close();
      fleet = undefined;
      server = undefined;
    });

    it('the team run resumes under its run id in another worker and completes, its member continued, no committed batch redone', async () => {
      server = await startFakeOpenAIServer({ streaming, decide: researchTeamScript });
      const workerEnv = {
        CAIRN_MODEL: 'openai-chat:local-model',
        OPENAI_BASE_URL: server.url,
        ...env,
      };
      // The client stamps runs with the definition the workers run: the team on the model CAIRN_MODEL names.
      const model = modelFromSpec({ model: workerEnv.CAIRN_MODEL, openaiBaseUrl: server.url });
      fleet = await startFleet({ backend: FLEET_BACKEND, registry: createRegistry({ model }) });
      await fleet.spawnWorker('a', workerEnv);
      await fleet.spawnWorker('b', workerEnv);
      const run = await fleet.client.enqueueRun({
        entity: TEAM,
        input: "Research 'cairns'",
        checkpoint: 'tool-batch',
      });

      let holder: string | undefined;
      await waitFor(
        async () => {
          const view = await fleet!.client.getRun(run.runId);
          holder = holderOf(view);
          return (
            holder !== undefined &&
            (view?.member_runs[0]?.last_checkpoint_at_message_index ?? 0) >= 3
          );
        },
        20_000,
        "the member's first checkpoint",
      );
      const victim = fleet.workers.find((w) => w.id === holder)!;
      victim.kill('SIGKILL');
      await victim.exited;

      const done = await fleet.client.waitForRun(run.runId, { timeoutMs: 30_000 });
      expect(done.status).toBe('COMPLETED');
      const view = (await fleet.client.getRun(run.runId))!;
      expect(view.run_id).toBe(run.runId);
      expect(view.attempts.find((a) => a.reason === 'recovered')?.worker_id).not.toBe(victim.id);
      expect(view.content).toContain("Top 3 results for 'cairns': result-a, result-b, result-c");
      expect(view.content).toContain('Detail for result-c: lorem ipsum dolor sit amet');
      expect(view.member_runs).toHaveLength(1);
      expect(view.member_runs[0]!.attempts.length).toBeGreaterThanOrEqual(2);
      const tools = allTools(view);
      expect(tools.filter((t) => t.name === 'slow_search')).toHaveLength(1);
      const ledger = fleet.ledger();
      for (const t of tools.filter(
        (t) => t.name !== 'delegate_task_to_member' && t.status === 'completed',
      )) {
        expect(ledger.get(t.idempotency_key), `${t.name} ${t.idempotency_key}`).toBe(1);
      }
      // Every model turn went to Chat Completions, asking to stream or not as configured.
      expect(server.requests.length).toBeGreaterThanOrEqual(7);
      expect(
        new Set(server.requests.map((r) => `${r.path} stream=${String(r.body['stream'])}`)),
      ).toEqual(new Set([`/v1/chat/completions stream=${String(stream)}`]));
    });
  },
);
