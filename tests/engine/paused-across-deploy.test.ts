import {
  Agent,
  DELEGATE_TOOL_NAME,
  definitionHashOf,
  Engine,
  Registry,
  Team,
  tool,
  type ActionDecision,
} from '@cairn/engine';
import { validateDecision } from '@cairn/engine/store';
import { firstUserInput, ScriptedModel, toolResults } from '@cairn/engine/testing';
import type { RunView } from '@cairn/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

let t: TestStore;
beforeEach(async () => {
  t = await openTestStore();
  restarts.length = 0;
});
afterEach(() => t.close());

/** Every execution of `restart_service`, in order, across every definition below. */
const restarts: string[] = [];

const restartService = tool({
  name: 'restart_service',
  description: 'Restarts a service (a person approves every restart)',
  parameters: z.object({ service: z.string() }),
  needsApproval: true,
  execute: ({ service }) => {
    restarts.push(service);
    return `restarted ${service}`;
  },
});

const askOperator = tool({
  name: 'ask_operator',
  description: 'Asks the on-call operator; their answer is the result',
  parameters: z.object({ question: z.string() }),
  external: true,
});

/** The ops agent as one deploy defines it: `instructions` is what the deploys change. */
function opsAgent(instructions: string): Agent {
  return new Agent({
    name: 'ops-agent',
    instructions,
    tools: [restartService, askOperator],
    checkpoint: 'tool-batch',
    model: new ScriptedModel({
      toolCallIds: 'fresh',
      decide: ({ messages }) => {
        const results = toolResults(messages);
        const input = firstUserInput(messages);
        if (results.length > 0) return { text: `report: ${results[0]!.content}` };
        return input.startsWith('ask ')
          ? { toolCalls: [{ name: 'ask_operator', arguments: { question: input.slice(4) } }] }
          : { toolCalls: [{ name: 'restart_service', arguments: { service: input } }] };
      },
    }),
  });
}

function opsTeam(member: Agent): Team {
  return new Team({
    name: 'ops-team',
    members: [member],
    checkpoint: 'tool-batch',
    model: new ScriptedModel({
      toolCallIds: 'fresh',
      decide: ({ messages }) => {
        const [report] = toolResults(messages, DELEGATE_TOOL_NAME);
        return report
          ? { text: `team: ${report.content}` }
          : {
              toolCalls: [
                {
                  name: DELEGATE_TOOL_NAME,
                  arguments: { member: 'ops-agent', task: firstUserInput(messages) },
                },
              ],
            };
      },
    }),
  });
}

const OLD = 'Check before restarting.';
const NEW = 'Check twice before restarting.';

type Variant = 'agent' | 'team';

function registryOf(variant: Variant, instructions: string): Registry {
  const agent = opsAgent(instructions);
  return variant === 'agent'
    ? new Registry({ agents: [agent] })
    : new Registry({ teams: [opsTeam(agent)] });
}

function workerOf(
  variant: Variant,
  instructions: string,
  id: string,
  versionGraceMs: number,
): Engine {
  return new Engine({
    store: t.store,
    registry: registryOf(variant, instructions),
    workerId: id,
    versionGraceMs,
  });
}

const ENTITY = {
  agent: { kind: 'agent', name: 'ops-agent' },
  team: { kind: 'team', name: 'ops-team' },
} as const;

/** A run paused on its gated call by a worker of the old definition an hour ago, then decided now (after the deploy). */
async function pausedAnHourAgoThenDecided(
  variant: Variant,
  input: string,
  decision: ActionDecision,
): Promise<string> {
  const old = workerOf(variant, OLD, 'old', 60_000);
  const { runId } = await old.createRun({ entity: ENTITY[variant], input });
  expect(await old.processPickup({ job: 'run', runId, attemptsStarted: 1 })).toEqual({
    kind: 'finished',
    status: 'PAUSED',
  });
  await t.db
    .updateTable('runs')
    .set({ updated_at: new Date(Date.now() - 3_600_000) })
    .execute();
  const [action] = await t.store.listPendingActions(runId);
  const decided = await t.store.decideActions(
    runId,
    [{ actionId: action!.actionId, decision }],
    validateDecision,
  );
  expect(decided).toMatchObject({ pending: 0, resume: { rootRunId: runId } });
  return runId;
}

/** The resume job the last decision enqueued, as a worker picks it up. */
const resume = (runId: string) => ({
  job: 'continue' as const,
  runId,
  reason: 'continue' as const,
  attemptsStarted: 1,
});

function toolMessages(view: RunView, name: string): string[] {
  return [
    ...view.messages.flatMap((m) => (m.role === 'tool' && m.name === name ? [m.content] : [])),
    ...view.member_runs.flatMap((member) => toolMessages(member, name)),
  ];
}

describe.each(['agent', 'team'] as const)(
  'a run of an %s paused on a gated call, decided after a deploy changed the definition',
  (variant) => {
    it('is left for a worker with its definition for the grace period counted from the decision, and such a worker completes it', async () => {
      const runId = await pausedAnHourAgoThenDecided(variant, 'api', { type: 'approve' });
      const latest = workerOf(variant, NEW, 'new', 60_000);
      await expect(latest.processPickup(resume(runId))).rejects.toMatchObject({
        name: 'EntityAwaitingDeployError',
      });
      expect((await t.store.getRun(runId))!.status).toBe('PAUSED');
      expect(restarts).toEqual([]);

      expect(await workerOf(variant, OLD, 'old-2', 60_000).processPickup(resume(runId))).toEqual({
        kind: 'finished',
        status: 'COMPLETED',
      });
      const view = (await t.store.getRunView(runId))!;
      expect(toolMessages(view, 'restart_service')).toEqual(['restarted api']);
      expect(restarts).toEqual(['api']);
      expect(view.definition_hash).toBe(
        definitionHashOf(registryOf(variant, OLD).get(ENTITY[variant])),
      );
    });

    it.each([
      ['approve', 'api', { type: 'approve' }, 'restart_service', 'restarted api', ['api']],
      [
        'reject',
        'api',
        { type: 'reject', message: 'not now' },
        'restart_service',
        'A person rejected this call of tool "restart_service"; it was not run. Their message: not now',
        [],
      ],
      [
        'external result',
        'ask which one?',
        { type: 'result', output: 'the cache' },
        'ask_operator',
        'the cache',
        [],
      ],
    ] as const)(
      '%s: ends in ERROR (DefinitionChangedError) once no worker with its definition took it; continue { upgrade: true } applies the decision once and completes it',
      async (_label, input, decision, toolName, message, restarted) => {
        const runId = await pausedAnHourAgoThenDecided(variant, input, decision as ActionDecision);
        const latest = workerOf(variant, NEW, 'new', 0);
        expect(await latest.processPickup(resume(runId))).toEqual({
          kind: 'finished',
          status: 'ERROR',
        });
        const failed = (await t.store.getRun(runId))!;
        expect(failed.error).toMatchObject({ name: 'DefinitionChangedError' });
        expect(restarts).toEqual([]);

        expect((await latest.continueRun(runId, { upgrade: true })).action).toBe('resume');
        expect(
          await latest.processPickup({
            job: 'continue',
            runId,
            reason: 'continue',
            attemptsStarted: 1,
          }),
        ).toEqual({ kind: 'finished', status: 'COMPLETED' });
        const view = (await t.store.getRunView(runId))!;
        expect(toolMessages(view, toolName)).toEqual([message]);
        expect(restarts).toEqual([...restarted]);
        expect(view.definition_hash).toBe(
          definitionHashOf(registryOf(variant, NEW).get(ENTITY[variant])),
        );
        // A team's member run resumed on the new member too, and carries its hash.
        expect(view.member_runs.map((m) => [m.status, m.definition_hash])).toEqual(
          variant === 'team' ? [['COMPLETED', definitionHashOf(opsAgent(NEW))]] : [],
        );
        // A later pickup (a duplicate job) changes nothing: the approved call ran once.
        await latest.processPickup({
          job: 'continue',
          runId,
          reason: 'continue',
          attemptsStarted: 2,
        });
        expect(restarts).toEqual([...restarted]);
      },
    );
  },
);
