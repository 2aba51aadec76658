import { Agent, Engine, MAX_TOOL_CALLS_PER_TURN, Registry, tool } from '@cairn/engine';
import {
  exportRun,
  parseRunExport,
  replayRun,
  ScriptedModel,
  toolResults,
  type RunExport,
} from '@cairn/engine/testing';
import { createDb, migrate, openStore } from '@cairn/store';
import { z } from 'zod';
import { FigureSink } from '../lib/attempt.js';
import { medianFigure } from '../lib/figure.js';
import type { Section } from '../lib/section.js';

const ID = 'replay';
/** Model turns of the stored run: 99 tool-call turns, then the answer. */
const TURNS = 100;

/** An agent whose scripted model calls `lookup` once a turn, 99 times, then answers. */
function hundredTurnRegistry(): Registry {
  const lookup = tool({
    name: 'lookup',
    description: 'Looks a key up',
    parameters: z.object({ key: z.string(), page: z.number().int() }),
    execute: ({ key, page }) => `value of ${key} on page ${page}: ${'x'.repeat(200)}`,
  });
  const model = new ScriptedModel({
    decide: ({ messages }) => {
      const done = toolResults(messages).length;
      return done < TURNS - 1
        ? { toolCalls: [{ name: 'lookup', arguments: { key: `k${done}`, page: done } }] }
        : { text: `looked up ${done} keys` };
    },
  });
  return new Registry({
    agents: [new Agent({ name: 'looker', model, tools: [lookup], maxTurns: TURNS })],
  });
}

/** Tool calls of the narrow wide turn; the wide one has {@link MAX_TOOL_CALLS_PER_TURN}. */
const NARROW_TURN_CALLS = 100;

/** A run file of one turn of `calls` `lookup` calls, then the answer (built in memory: no model ran it). */
function wideTurnFile(calls: number): RunExport {
  const toolCalls = Array.from({ length: calls }, (_, i) => ({
    id: `call_${i}`,
    name: 'lookup',
    arguments: JSON.stringify({ key: `k${i}`, page: i }),
  }));
  return parseRunExport({
    schema: 'cairn.run-export',
    schema_version: 1,
    exported_at: new Date().toISOString(),
    run: {
      run_id: `run_wide_${calls}`,
      parent_run_id: null,
      parent_tool_call_id: null,
      entity: { kind: 'agent', name: 'looker' },
      status: 'COMPLETED',
      checkpoint: 'tool-batch',
      input: 'go',
      content: 'done',
      definition_hash: null,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, toolCalls },
        ...toolCalls.map((c) => ({ role: 'tool', toolCallId: c.id, name: 'lookup', content: 'v' })),
        { role: 'assistant', content: 'done' },
      ],
      tool_calls: [],
      actions: [],
    },
    members: [],
  });
}

/**
 * `npm run bench -- --only replay`: a 100-turn run is executed and stored on
 * Postgres, exported once, then replayed in memory (no model, no tool, no
 * database): turns per second of `replayRun`, and what the export took. Then
 * one wide turn (100 calls, and the cap's 1,000) replayed: calls per second,
 * the same at both widths when a batch costs time linear in its calls.
 */
export const replaySection: Section = {
  id: ID,
  title: 'Replay of a stored 100-turn run',
  cairn: true,
  async run(context) {
    const rounds = context.quick ? 5 : 30;
    const sink = new FigureSink(ID, context.log);
    const database = await context.services.database(ID);
    const db = createDb(database.url, { max: 2 });
    const registry = hundredTurnRegistry();
    const names = ['replay, turns per second (100-turn run, in memory)', 'export of the run, ms'];
    try {
      await migrate(db);
      const store = openStore(db).writes;
      await sink.part(names, async () => {
        const engine = new Engine({ store, registry });
        const run = await engine.createRun({
          entity: { kind: 'agent', name: 'looker' },
          input: 'go',
        });
        await engine.execute(run.runId, { reason: 'run' });
        const exportMs: number[] = [];
        let file = await exportRun(store, run.runId);
        for (let round = 0; round < rounds; round++) {
          const started = performance.now();
          file = await exportRun(store, run.runId);
          exportMs.push(performance.now() - started);
        }
        context.log(`replaying ${rounds} times, ${file.run.messages.length} messages each`);
        // One unmeasured replay warms the code paths up.
        await replayRun(registry, file);
        const turnsPerSecond: number[] = [];
        for (let round = 0; round < rounds; round++) {
          const started = performance.now();
          const result = await replayRun(registry, file);
          const seconds = (performance.now() - started) / 1000;
          if (!result.ok || result.turns !== TURNS)
            throw new Error(`the replay did not go through: ${JSON.stringify(result)}`);
          turnsPerSecond.push(result.turns / seconds);
        }
        sink.figures.push(
          medianFigure(ID, names[0]!, turnsPerSecond, 'turns/s', {
            note: `${TURNS} model turns and ${TURNS - 1} tool calls per replay, each checked against the current definition`,
          }),
          medianFigure(ID, names[1]!, exportMs, 'ms', {
            note: `the run's ${file.run.messages.length} messages, tool calls and actions read from Postgres`,
          }),
        );
      });
      const wide = [NARROW_TURN_CALLS, MAX_TOOL_CALLS_PER_TURN].map(
        (calls) => `replay of a ${calls}-call turn, tool calls per second`,
      );
      await sink.part(wide, async () => {
        for (const [index, calls] of [NARROW_TURN_CALLS, MAX_TOOL_CALLS_PER_TURN].entries()) {
          const file = wideTurnFile(calls);
          for (let round = 0; round < 3; round++) await replayRun(registry, file);
          // Each sample replays the same number of calls at either width (GC pauses land in both alike).
          const replaysPerSample = MAX_TOOL_CALLS_PER_TURN / calls;
          const callsPerSecond: number[] = [];
          for (let round = 0; round < rounds; round++) {
            const started = performance.now();
            for (let replay = 0; replay < replaysPerSample; replay++) {
              const result = await replayRun(registry, file);
              if (!result.ok || result.toolCalls !== calls)
                throw new Error(`the replay did not go through: ${JSON.stringify(result)}`);
            }
            callsPerSecond.push(MAX_TOOL_CALLS_PER_TURN / ((performance.now() - started) / 1000));
          }
          sink.figures.push(
            medianFigure(ID, wide[index]!, callsPerSecond, 'calls/s', {
              note: `one model turn of ${calls} concurrent tool calls, then the answer; ${MAX_TOOL_CALLS_PER_TURN / calls} replay(s) a sample`,
            }),
          );
        }
      });
    } finally {
      await db.destroy();
    }
    return {
      figures: sink.figures,
      notes: sink.notes,
      ...(sink.failed.length > 0 && { failed: sink.failed }),
    };
  },
};
