import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Agent,
  definitionHashOf,
  Engine,
  Registry,
  RunNotContinuableError,
  Team,
  UserError,
} from '@cairn/engine';
import { ScriptedModel } from '@cairn/engine/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRegistry, ledgerKey } from '../deadlines/deadline-registry.js';
import { expectMemberStoppedAtTeamDeadline } from '../deadlines/member-deadline.js';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

let t: TestStore;
let dir: string;
let ledger: string;
beforeEach(async () => {
  t = await openTestStore();
  dir = mkdtempSync(join(tmpdir(), 'cairn-deadlines-'));
  ledger = join(dir, 'ledger.tsv');
  process.env.CAIRN_TOOL_LEDGER = ledger;
});
afterEach(async () => {
  delete process.env.CAIRN_TOOL_LEDGER;
  rmSync(dir, { recursive: true, force: true });
  await t.close();
});

/** The tool ledger's entries, in order. */
function entries(): string[] {
  try {
    return readFileSync(ledger, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t')[0]!);
  } catch {
    return [];
  }
}

const registry = createRegistry();
/**
 * A deadline that falls while the long step runs: the run's first batches (for a team, its
 * member's too) commit before it even on a loaded machine, where 800 ms once ran out first.
 */
const IN_FLIGHT_DEADLINE_MS = 3000;
const stepper = registry.get({ kind: 'agent', name: 'stepper' }) as Agent;
const team = registry.get({ kind: 'team', name: 'deadline-team' }) as Team;

describe('deadlines in one process', () => {
  it('aborts the tool in flight at the deadline and ends the run in ERROR, its earlier batch kept', async () => {
    const engine = new Engine({ store: t.store, registry });
    const run = await engine.run(stepper, 'Work: long steps take 60000 ms', {
      deadlineMs: IN_FLIGHT_DEADLINE_MS,
    });

    expect(run.status).toBe('ERROR');
    expect(run.error).toMatchObject({
      name: 'DeadlineExceededError',
      message: expect.stringContaining(`run ${run.runId} passed its deadline`),
    });
    expect(entries()).toEqual([
      ledgerKey('quick_step', 'finished'),
      ledgerKey('long_step', 'started'),
      ledgerKey('long_step', 'aborted:DeadlineExceededError'),
    ]);
    const view = (await t.store.getRunView(run.runId))!;
    // The quick step's batch stays committed: input, its call, its result.
    expect(view.last_checkpoint_at_message_index).toBe(3);
    expect(view.tools.map((c) => [c.name, c.status])).toEqual([['quick_step', 'completed']]);
    expect(Date.parse(view.deadline_at!) - Date.parse(view.created_at)).toBe(IN_FLIGHT_DEADLINE_MS);
    const events = await t.store.listEventsOfTypes(run.runId, ['RunError']);
    expect(events.map((e) => (e.data as { error: { name: string } }).error.name)).toEqual([
      'DeadlineExceededError',
    ]);
  });

  it("takes the entity's maxDurationMs as the default deadline; deadlineMs overrides it; none means no deadline", async () => {
    const bounded = new Agent({
      name: 'bounded',
      model: new ScriptedModel({ decide: () => ({ text: 'ok' }) }),
      maxDurationMs: 90_000,
    });
    const engine = new Engine({ store: t.store, registry: new Registry({ agents: [bounded] }) });
    const entity = { kind: 'agent', name: 'bounded' } as const;
    const byDefault = await engine.createRun({ entity, input: 'x' });
    expect(byDefault.deadlineAt!.getTime() - byDefault.createdAt.getTime()).toBe(90_000);
    const asked = await engine.createRun({ entity, input: 'x', deadlineMs: 5000 });
    expect(asked.deadlineAt!.getTime() - asked.createdAt.getTime()).toBe(5000);
    const free = await new Engine({ store: t.store, registry }).createRun({
      entity: { kind: 'agent', name: 'stepper' },
      input: 'x',
    });
    expect(free.deadlineAt).toBeNull();
    expect((await t.store.getRunView(free.runId))!.deadline_at).toBeNull();
  });

  it('refuses a continue past the deadline without deadline_ms; with one it resumes from the checkpoint and completes', async () => {
    const engine = new Engine({ store: t.store, registry });
    const run = await engine.run(stepper, 'Work: long steps take 60000 ms', {
      deadlineMs: IN_FLIGHT_DEADLINE_MS,
    });
    expect(run.error?.name).toBe('DeadlineExceededError');

    const refused = engine.continueRun(run.runId, { input: 'Resume: long steps take 50 ms' });
    await expect(refused).rejects.toBeInstanceOf(RunNotContinuableError);
    await expect(refused).rejects.toThrow(/deadline passed .*continue with deadline_ms/);

    const decision = await engine.continueRun(run.runId, {
      input: 'Resume: long steps take 50 ms',
      deadlineMs: 30_000,
    });
    expect(decision.action).toBe('resume');
    const result = await engine.execute(run.runId, { reason: 'continue' });
    expect(result.outcome === 'finished' && result.run).toMatchObject({
      status: 'COMPLETED',
      content: 'finished: long step of 50 ms done',
    });
    const resumed = (await t.store.getRun(run.runId))!;
    expect(resumed.deadlineAt!.getTime()).toBeGreaterThan(run.deadlineAt!.getTime());
    // The quick step ran once: the resume went on from the checkpoint.
    expect(entries().filter((e) => e === ledgerKey('quick_step', 'finished'))).toHaveLength(1);
  });

  it("stops a team's member run at the team's deadline: both end in ERROR, each naming itself", async () => {
    const engine = new Engine({ store: t.store, registry });
    const run = await engine.run(team, 'Work: long steps take 60000 ms', {
      deadlineMs: IN_FLIGHT_DEADLINE_MS,
    });

    expect(run.status).toBe('ERROR');
    expect(run.error?.name).toBe('DeadlineExceededError');
    const view = (await t.store.getRunView(run.runId))!;
    expectMemberStoppedAtTeamDeadline(view);
    expect(entries()).toContain(ledgerKey('long_step', 'aborted:DeadlineExceededError'));
  });

  it('refuses a bad maxDurationMs when the entity is defined and a bad deadlineMs before writing anything', async () => {
    const model = new ScriptedModel({ decide: () => ({ text: 'ok' }) });
    for (const bad of [0, -5, 1.5, Number.NaN, '100' as unknown as number]) {
      expect(() => new Agent({ name: 'a', model, maxDurationMs: bad })).toThrow(UserError);
      expect(() => new Agent({ name: 'a', model, maxDurationMs: bad })).toThrow(
        /agent "a": maxDurationMs must be a positive integer/,
      );
    }
    const member = new Agent({ name: 'm', model });
    expect(() => new Team({ name: 't', model, members: [member], maxDurationMs: 0 })).toThrow(
      /team "t": maxDurationMs/,
    );

    const engine = new Engine({ store: t.store, registry });
    for (const bad of [0, -1, 2.5]) {
      await expect(
        engine.createRun({
          entity: { kind: 'agent', name: 'stepper' },
          input: 'x',
          deadlineMs: bad,
        }),
      ).rejects.toThrow(/deadlineMs must be a positive integer/);
    }
    expect(await t.store.listRuns({ limit: 10 })).toMatchObject({ runs: [] });
  });

  it('leaves maxDurationMs out of the definition hash: a new default deadline strands no run', () => {
    const model = new ScriptedModel({ decide: () => ({ text: 'ok' }) });
    const before = new Agent({ name: 'a', model });
    const after = new Agent({ name: 'a', model, maxDurationMs: 60_000 });
    expect(definitionHashOf(after)).toBe(definitionHashOf(before));
  });
});
