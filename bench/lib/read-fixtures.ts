import { z } from 'zod';
import { Agent, Registry, tool, type Engine } from '@cairn/engine';
import { ScriptedModel } from '@cairn/engine/testing';
import type { StoreWrites } from '@cairn/store';
import { storeLongRun } from '../../packages/store/src/test-support/long-run.js';

/** The agent of {@link storeWideTurnRun}'s run: a scripted researcher that looks keys up, several at a turn. */
const WIDE_TURN_AGENT = 'wide-reader';

/** Lookups of each model turn of {@link storeWideTurnRun}'s run (a turn writes one checkpoint of 1 + this many messages). */
export const CALLS_PER_TURN = 9;

/**
 * The registry of {@link WIDE_TURN_AGENT}: each turn asks for up to
 * {@link CALLS_PER_TURN} `lookup` calls until the history holds `messages`
 * less its answer, then answers, so the finished run holds exactly `messages`.
 */
export function wideTurnRegistry(messages: number): Registry {
  const lookup = tool({
    name: 'lookup',
    description: 'Looks a key up',
    parameters: z.object({ key: z.string() }),
    execute: ({ key }) => `value of ${key}: ${'x'.repeat(200)}`,
  });
  const model = new ScriptedModel({
    decide: ({ messages: history }) => {
      // What fits before the answer: a turn is its assistant message and its calls' results.
      const room = messages - history.length - 1;
      if (room < 2) return { text: `looked up ${history.length} keys` };
      const calls = Math.min(CALLS_PER_TURN, room - 1);
      return {
        toolCalls: Array.from({ length: calls }, (_, i) => ({
          name: 'lookup',
          arguments: { key: `k${history.length + i}` },
        })),
      };
    },
  });
  return new Registry({
    agents: [new Agent({ name: WIDE_TURN_AGENT, model, tools: [lookup], maxTurns: messages })],
  });
}

/**
 * Runs {@link WIDE_TURN_AGENT} to completion on `engine` (of
 * {@link wideTurnRegistry}), as a worker stores it: a checkpoint per turn
 * with its calls and events, then its answer. Returns the run's id.
 */
export async function storeWideTurnRun(engine: Engine): Promise<string> {
  const run = await engine.createRun({
    entity: { kind: 'agent', name: WIDE_TURN_AGENT },
    input: 'Look every key up.',
  });
  await engine.execute(run.runId, { reason: 'run' });
  return run.runId;
}

/**
 * The run page's long run ({@link storeLongRun}: `turns` one-call turns in
 * one write), ended by its `RunCompleted` event as an execution ends it, so
 * its event stream closes once read.
 */
export async function storeLongFinishedRun(store: StoreWrites, turns: number): Promise<string> {
  const runId = await storeLongRun(store, turns);
  await store.appendEvents(runId, [{ type: 'RunCompleted', data: { content: 'done' } }]);
  return runId;
}
