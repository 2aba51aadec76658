import { randomBytes } from 'node:crypto';
import { createClient } from '@cairn/client';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '@cairn/engine/testing';
import { createRegistry, researchTeamScript } from '@cairn/research-team';
import { modelFromSpec } from '@cairn/runtime';
import { afterEach, expect, it } from 'vitest';
import { holderOf, RESEARCHER, startFleet, TEAM, waitFor, type Fleet } from './fleet.js';
import {
  spanTree,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from './otlp-receiver.js';

const backend = process.env.CAIRN_TEST_REDIS_URL ? 'redis' : 'postgres';

/** The GenAI conventions' attribute names (`@opentelemetry/semantic-conventions`), as a collector receives them. */
const OPERATION = 'gen_ai.operation.name';
const TOOL_NAME = 'gen_ai.tool.name';

let fleet: Fleet | undefined;
let receiver: OtlpReceiver | undefined;
let provider: FakeOpenAIServer | undefined;
afterEach(async () => {
  await fleet?.stop();
  await receiver?.close();
  await provider?.close();
  fleet = undefined;
  receiver = undefined;
  provider = undefined;
});

it(`one run is one trace in the GenAI conventions, from the caller's request through both attempts across a SIGKILL and into its member run (${backend})`, async () => {
  receiver = await startOtlpReceiver();
  const r = receiver;
  fleet = await startFleet({ backend, toolDelayMs: 300 });
  const f = fleet;
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: r.endpoint };
  await f.spawnWorker('a', otel);
  await f.spawnWorker('b', otel);
  const producer = await f.spawnProducer('producer', { env: otel });

  // The caller's own trace: every span of the run must join it.
  const traceId = randomBytes(16).toString('hex');
  const callerSpanId = randomBytes(8).toString('hex');
  const cairn = createClient({ baseUrl: producer.baseUrl });
  const { run_id } = await cairn.runs.create(
    { ...TEAM, input: "Research 'cairns'", checkpoint: 'tool-batch' },
    { headers: { traceparent: `00-${traceId}-${callerSpanId}-01` } },
  );

  const inTrace = () => r.spans.filter((s) => s.traceId === traceId);
  let holder: string | undefined;
  await waitFor(
    async () => {
      const view = await f.client.getRun(run_id);
      holder = holderOf(view);
      return (
        holder !== undefined && (view?.member_runs[0]?.last_checkpoint_at_message_index ?? 0) >= 3
      );
    },
    20_000,
    "the member's first checkpoint",
  );
  // The batch processor exports what the victim has finished (every 200 ms): its slow_search span.
  await waitFor(
    () =>
      inTrace().some(
        (s) => s.name === 'execute_tool slow_search' && s.attributes[TOOL_NAME] === 'slow_search',
      ),
    10_000,
    "the victim's slow_search span",
  );
  const victim = f.workers.find((w) => w.id === holder)!;
  victim.kill('SIGKILL');
  await victim.exited;
  expect((await cairn.runs.wait(run_id, { timeoutMs: 30_000 })).status).toBe('COMPLETED');
  const view = await cairn.runs.get(run_id);
  const memberId = view.member_runs[0]!.run_id;

  const named = (name: string, runId?: string) =>
    inTrace().filter(
      (s) => s.name === name && (runId === undefined || s.attributes['cairn.run_id'] === runId),
    );
  /** The GenAI operation's spans (`invoke_agent`, `chat`, `execute_tool`), of one run when given. */
  const operation = (op: string, runId?: string) =>
    inTrace().filter(
      (s) =>
        s.attributes[OPERATION] === op &&
        (runId === undefined || s.attributes['cairn.run_id'] === runId),
    );
  await waitFor(
    () => named('invoke_agent research-team', run_id).length === 1,
    10_000,
    "the team's invoke_agent span",
  );

  const spans = inTrace();
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const parentOf = (span: ReceivedSpan) => byId.get(span.parentSpanId);
  console.log(`trace ${traceId}:\n${spanTree(spans)}`);

  const request = spans.find(
    (s) => s.service === 'cairn-producer' && s.name === 'POST /v1/teams/:name/runs',
  )!;
  expect(request.parentSpanId).toBe(callerSpanId);
  const teamRun = named('invoke_agent research-team', run_id)[0]!;
  expect(parentOf(teamRun)).toBe(request);
  expect(teamRun.attributes).toMatchObject({
    [OPERATION]: 'invoke_agent',
    'gen_ai.agent.name': 'research-team',
    'gen_ai.provider.name': 'scripted',
    'cairn.outcome': 'RunCompleted',
  });
  const memberRun = operation('invoke_agent', memberId)[0]!;
  expect(memberRun.name).toBe(`invoke_agent ${String(memberRun.attributes['gen_ai.agent.name'])}`);

  for (const [runId, run] of [
    [run_id, teamRun],
    [memberId, memberRun],
  ] as const) {
    const attempts = named('cairn.attempt', runId);
    expect(attempts.map((a) => a.attributes['cairn.epoch']).sort()).toEqual([1, 2]);
    expect(attempts.every((a) => parentOf(a) === run)).toBe(true);
    const [first, second] = [...attempts].sort(
      (a, b) => Number(a.attributes['cairn.epoch']) - Number(b.attributes['cairn.epoch']),
    );
    expect(first!.attributes).toMatchObject({
      'cairn.worker_id': victim.id,
      'cairn.attempt.outcome': 'abandoned',
    });
    expect(second!.attributes).toMatchObject({
      'cairn.attempt.reason': 'recovered',
      'cairn.attempt.outcome': 'RunCompleted',
    });
    expect(second!.attributes['cairn.worker_id']).not.toBe(victim.id);
  }
  expect(parentOf(memberRun)).toMatchObject({
    name: 'execute_tool delegate_task_to_member',
    attributes: { [OPERATION]: 'execute_tool', [TOOL_NAME]: 'delegate_task_to_member' },
  });

  // The dead worker's finished spans are in the tree, under its attempt; the survivor's under the second.
  const memberAttempt = (epoch: number) =>
    named('cairn.attempt', memberId).find((a) => a.attributes['cairn.epoch'] === epoch)!;
  const toolsUnder = (attempt: ReceivedSpan) =>
    operation('execute_tool')
      .filter((s) => parentOf(s) === attempt)
      .map((s) => s.attributes[TOOL_NAME]);
  expect(toolsUnder(memberAttempt(1))).toContain('slow_search');
  expect(toolsUnder(memberAttempt(2))).toContain('slow_fetch_detail');
  for (const tool of operation('execute_tool', memberId)) {
    expect(tool.name).toBe(`execute_tool ${String(tool.attributes[TOOL_NAME])}`);
    expect(tool.attributes['gen_ai.tool.call.id']).toEqual(expect.any(String));
  }
  const chats = operation('chat', memberId).filter((s) => parentOf(s) === memberAttempt(2));
  expect(chats.length).toBeGreaterThan(0);
  for (const chat of chats) {
    expect(chat.name).toBe('chat researcher');
    expect(chat.attributes).toMatchObject({
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'researcher',
      'gen_ai.usage.input_tokens': expect.any(Number),
      'gen_ai.usage.output_tokens': expect.any(Number),
    });
  }
  expect(
    spans.filter((s) => s.name === 'cairn.checkpoint' && parentOf(s) === memberAttempt(2)).length,
  ).toBeGreaterThan(0);
  // Message content is never recorded.
  expect(
    spans.some((s) =>
      Object.keys(s.attributes).some((key) =>
        ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.system_instructions'].includes(
          key,
        ),
      ),
    ),
  ).toBe(false);
  // Nothing of this run went to another trace.
  expect(
    r.spans
      .filter(
        (s) => s.attributes['cairn.run_id'] === run_id || s.attributes['cairn.run_id'] === memberId,
      )
      .every((s) => s.traceId === traceId),
  ).toBe(true);
});

it(`on an OpenAI-compatible provider, chat spans name the model that answered and why it stopped; with content turned on they carry the prompt and answer, and tool spans their arguments and results (${backend})`, async () => {
  receiver = await startOtlpReceiver();
  const r = receiver;
  provider = await startFakeOpenAIServer({ decide: researchTeamScript });
  const spec = 'openai-chat:gpt-b';
  fleet = await startFleet({
    backend,
    registry: createRegistry({
      model: modelFromSpec({ model: spec, openaiBaseUrl: provider.url }),
    }),
  });
  const f = fleet;
  await f.spawnWorker('a', {
    OTEL_EXPORTER_OTLP_ENDPOINT: r.endpoint,
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    CAIRN_MODEL: spec,
    OPENAI_BASE_URL: provider.url,
  });
  const { runId } = await f.client.enqueueRun({ entity: RESEARCHER, input: "Research 'cairns'" });
  expect((await f.client.waitForRun(runId, { timeoutMs: 30_000 })).status).toBe('COMPLETED');
  const ofRun = (op: string) =>
    r.spans.filter((s) => s.attributes[OPERATION] === op && s.attributes['cairn.run_id'] === runId);
  await waitFor(() => ofRun('invoke_agent').length === 1, 10_000, "the run's invoke_agent span");

  const chats = ofRun('chat');
  expect(chats.length).toBeGreaterThan(1);
  for (const chat of chats) {
    expect(chat.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai-chat',
      'gen_ai.request.model': 'gpt-b',
      // The provider answers with a dated snapshot of the model asked for.
      'gen_ai.response.model': 'gpt-b-2026-01-15',
    });
    const [reason] = chat.attributes['gen_ai.response.finish_reasons'] as string[];
    const output = JSON.parse(String(chat.attributes['gen_ai.output.messages'])) as {
      parts: { type: string }[];
      finish_reason: string;
    }[];
    expect(output[0]!.finish_reason).toBe(reason);
    expect(output[0]!.parts.map((p) => p.type)).toContain(
      reason === 'tool_calls' ? 'tool_call' : 'text',
    );
    const input = JSON.parse(String(chat.attributes['gen_ai.input.messages'])) as {
      role: string;
      parts: { content?: string }[];
    }[];
    expect(input[0]).toEqual({
      role: 'user',
      parts: [{ type: 'text', content: "Research 'cairns'" }],
    });
    expect(chat.attributes['gen_ai.system_instructions']).toEqual(expect.any(String));
  }
  expect(chats.map((c) => (c.attributes['gen_ai.response.finish_reasons'] as string[])[0])).toEqual(
    [...Array<string>(chats.length - 1).fill('tool_calls'), 'stop'],
  );

  const tools = ofRun('execute_tool');
  expect(tools.length).toBeGreaterThan(0);
  for (const tool of tools) {
    expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments']))).toEqual(
      expect.any(Object),
    );
    expect(tool.attributes['gen_ai.tool.call.result']).toEqual(expect.any(String));
  }
});
