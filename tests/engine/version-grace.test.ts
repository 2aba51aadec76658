import {
  Agent,
  definitionHashOf,
  Engine,
  EntityAwaitingDeployError,
  Registry,
} from '@cairn/engine';
import { ScriptedModel } from '@cairn/engine/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

let t: TestStore;
beforeEach(async () => {
  t = await openTestStore();
});
afterEach(() => t.close());

const ANSWERER = { kind: 'agent', name: 'answerer' } as const;
const OLD = 'Answer briefly.';
const NEW = 'Answer at length.';

function answerer(instructions: string): Agent {
  return new Agent({
    name: 'answerer',
    instructions,
    checkpoint: 'tool-batch',
    model: new ScriptedModel({
      toolCallIds: 'fresh',
      decide: ({ messages }) => ({ text: `answer ${messages.length}` }),
    }),
  });
}

function worker(instructions: string, id: string, versionGraceMs = 60_000): Engine {
  return new Engine({
    store: t.store,
    registry: new Registry({ agents: [answerer(instructions)] }),
    workerId: id,
    versionGraceMs,
  });
}

/** Moves the run's last change an hour back: a run queued behind a backlog, or a long tool batch since its last checkpoint. */
async function lastChangedAnHourAgo(runId: string): Promise<void> {
  await t.db
    .updateTable('runs')
    .set({ updated_at: new Date(Date.now() - 3_600_000) })
    .where('run_id', '=', runId)
    .execute();
}

async function leftFor(
  engine: Engine,
  pickup: Parameters<Engine['processPickup']>[0],
): Promise<EntityAwaitingDeployError> {
  const error = await engine.processPickup(pickup).then(
    (outcome) => outcome,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EntityAwaitingDeployError);
  return error as EntityAwaitingDeployError;
}

describe('the version grace period of a run a worker with another definition picks up', () => {
  it('starts when a worker first leaves the run, not at its last change: a run queued an hour before a rolling deploy still goes to an old worker', async () => {
    const { runId } = await worker(OLD, 'producer').createRun({ entity: ANSWERER, input: 'hi' });
    await lastChangedAnHourAgo(runId);
    const latest = worker(NEW, 'new');
    const first = await leftFor(latest, { job: 'run', runId, attemptsStarted: 1 });
    expect(first.graceLeftMs).toBeGreaterThan(50_000);
    // Every later pickup counts from the same start: the wait ends, it is never extended.
    const second = await leftFor(latest, { job: 'run', runId, attemptsStarted: 2 });
    expect(second.graceLeftMs).toBeLessThanOrEqual(first.graceLeftMs);
    expect((await t.store.getRun(runId))!).toMatchObject({ status: 'PENDING', epoch: 0 });

    expect(
      await worker(OLD, 'old').processPickup({ job: 'run', runId, attemptsStarted: 3 }),
    ).toEqual({ kind: 'finished', status: 'COMPLETED' });
    expect((await t.store.getRun(runId))!.definitionHash).toBe(definitionHashOf(answerer(OLD)));
  });

  it('a run whose worker died in a long tool batch is left for the grace period from its recovery, then ends in ERROR once it is over', async () => {
    const { runId } = await worker(OLD, 'producer').createRun({ entity: ANSWERER, input: 'hi' });
    // Claimed and checkpointed by an old worker that died an hour into its next batch.
    const { epoch } = await t.store.claimRun(runId, { workerId: 'old', reason: 'run' });
    await t.store.commitCheckpoint(runId, epoch, {
      messages: [{ role: 'user', content: 'hi' }],
      toolCalls: [],
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    });
    await lastChangedAnHourAgo(runId);
    const recovered = { job: 'continue', runId, reason: 'recovered', attemptsStarted: 2 } as const;
    await leftFor(worker(NEW, 'new'), recovered);
    expect((await t.store.getRun(runId))!).toMatchObject({ status: 'RUNNING', epoch });

    // Still inside its grace period for a worker whose grace is longer than the time it waited.
    await leftFor(worker(NEW, 'new-2', 60_000), recovered);
    // Over for a worker whose grace period has passed since the first left it.
    // A fixed time: the 20 ms grace period is a timer under test and must pass since the first left it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await worker(NEW, 'new-3', 20).processPickup(recovered)).toEqual({
      kind: 'finished',
      status: 'ERROR',
    });
    expect((await t.store.getRun(runId))!.error).toMatchObject({ name: 'DefinitionChangedError' });
  });

  it('starts again after the run changed: a continue sent after its DefinitionChangedError gives old workers a new grace period', async () => {
    const { runId } = await worker(OLD, 'producer').createRun({ entity: ANSWERER, input: 'hi' });
    const latest = worker(NEW, 'new', 0);
    expect(await latest.processPickup({ job: 'run', runId, attemptsStarted: 1 })).toEqual({
      kind: 'finished',
      status: 'ERROR',
    });
    await latest.continueRun(runId);
    const left = await leftFor(worker(NEW, 'new-2'), {
      job: 'continue',
      runId,
      reason: 'continue',
      attemptsStarted: 1,
    });
    expect(left.graceLeftMs).toBeGreaterThan(50_000);
    expect(
      await worker(OLD, 'old').processPickup({
        job: 'continue',
        runId,
        reason: 'continue',
        attemptsStarted: 2,
      }),
    ).toEqual({ kind: 'finished', status: 'COMPLETED' });
  });
});
