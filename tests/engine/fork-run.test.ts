import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRegistry } from '@cairn/research-team';
import { Engine, InvalidForkPointError, RunNotContinuableError, type Message } from '@cairn/engine';
import { SessionHasForksError, type RunView } from '@cairn/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exportRun, replayRun } from '@cairn/engine/testing';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

// Forks at a checkpoint (docs/forks-and-replay.md "Forks: time travel at a checkpoint"), on the real store, with the research
// team's tools writing every execution to a ledger: what ran before the point never runs again.

process.env.RESEARCH_TOOL_DELAY_MS = '5';
process.env.RESEARCH_MODEL_LATENCY_MS = '0';

const RESEARCHER = { kind: 'agent', name: 'researcher' } as const;
const TEAM = { kind: 'team', name: 'research-team' } as const;
const INPUT = "Research the topic 'cairn forks'.";

let t: TestStore;
let engine: Engine;
let ledgerFile: string;

beforeEach(async () => {
  t = await openTestStore();
  ledgerFile = join(mkdtempSync(join(tmpdir(), 'cairn-fork-')), 'ledger.tsv');
  process.env.CAIRN_TOOL_LEDGER = ledgerFile;
  engine = new Engine({ store: t.store, registry: createRegistry(), workerId: 'test-worker' });
});
afterEach(async () => {
  delete process.env.CAIRN_TOOL_LEDGER;
  await t.close();
});

/** Tool executions so far: `[tool, idempotency key]`. */
function ledger(): [string, string][] {
  try {
    return readFileSync(ledgerFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t') as [string, string]);
  } catch {
    return [];
  }
}

async function view(runId: string): Promise<RunView> {
  return (await t.store.getRunView(runId))!;
}

async function completed(
  entity: typeof RESEARCHER | typeof TEAM,
  checkpoint: 'tool-batch' | 'tool-call',
) {
  const run = await engine.createRun({ entity, input: INPUT, checkpoint });
  await engine.execute(run.runId, { reason: 'run' });
  const done = await view(run.runId);
  expect(done.status).toBe('COMPLETED');
  return done;
}

/** `run_messages` rows stored under the run's own id (a fork's shared history has none). */
async function ownMessageRows(runId: string): Promise<number> {
  const row = await t.db
    .selectFrom('run_messages')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('run_id', '=', runId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The fork's own tool executions: those whose idempotency key is one of its tool calls'. */
function executionsOf(run: RunView): string[] {
  const keys = new Set(run.tools.map((c) => c.idempotency_key));
  return ledger()
    .filter(([, key]) => keys.has(key))
    .map(([tool]) => tool);
}

const toolNames = (messages: Message[]) =>
  messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.name) : []));

describe('a fork at a checkpoint', () => {
  it('lists every checkpoint; a fork between tool batches runs only what came after, and leaves its source as it was', async () => {
    const source = await completed(RESEARCHER, 'tool-batch');
    // One checkpoint per tool batch (the first with the input), then the answer.
    expect(source.checkpoints.map((c) => [c.seq, c.message_index, c.epoch])).toEqual([
      [1, 3, 1],
      [2, 5, 1],
      [3, 7, 1],
      [4, 9, 1],
      [5, 10, 1],
    ]);
    const before = ledger();
    expect(before.map(([tool]) => tool)).toEqual([
      'slow_search',
      'slow_fetch_detail',
      'slow_fetch_detail',
      'slow_fetch_detail',
    ]);

    // After the search and the first fetch.
    const fork = await engine.forkRun(source.run_id, { at: { checkpoint: 2 } });
    expect(fork).toMatchObject({ status: 'PENDING', sessionId: source.session_id });
    expect(fork.forkedFrom).toEqual({ run_id: source.run_id, checkpoint: 2, message_index: 5 });
    // Nothing of the shared history was written for it.
    expect(await ownMessageRows(fork.runId)).toBe(0);
    const forked = await view(fork.runId);
    expect(forked.messages).toEqual(source.messages.slice(0, 5));
    expect(forked.last_checkpoint_at_message_index).toBe(5);

    await engine.execute(fork.runId, { reason: 'run' });
    const done = await view(fork.runId);
    expect(done.status).toBe('COMPLETED');
    expect(done.content).toBe(source.content);
    // Only the two fetches after the point ran, under the fork's own keys.
    expect(executionsOf(done)).toEqual(['slow_fetch_detail', 'slow_fetch_detail']);
    expect(ledger()).toHaveLength(before.length + 2);
    expect(done.messages.slice(0, 5)).toEqual(source.messages.slice(0, 5));
    expect(done.checkpoints.slice(0, 2)).toEqual(source.checkpoints.slice(0, 2));
    expect(done.checkpoints.map((c) => c.message_index)).toEqual([3, 5, 7, 9, 10]);
    expect(done.forked_from).toEqual(fork.forkedFrom);

    // The source is as it was, and lists its fork.
    const after = await view(source.run_id);
    expect(after.messages).toEqual(source.messages);
    expect(after.status).toBe('COMPLETED');
    expect(after.forks).toEqual([fork.runId]);
    expect(after.forked_from).toBeNull();
    expect(await replayRun(createRegistry(), await exportRun(t.store, fork.runId))).toMatchObject({
      ok: true,
      turns: 5,
      toolCalls: 4,
    });
  });

  it('takes an input at a batch boundary or at the answer, and refuses points the run does not have', async () => {
    const source = await completed(RESEARCHER, 'tool-batch');
    // At the end, where the history is the run's answer, an input is required.
    await expect(engine.forkRun(source.run_id)).rejects.toThrow(/input is required/);
    await expect(engine.forkRun(source.run_id)).rejects.not.toBeInstanceOf(InvalidForkPointError);
    const atEnd = await engine.forkRun(source.run_id, { input: 'And now in French.' });
    expect(atEnd.forkedFrom).toEqual({ run_id: source.run_id, checkpoint: 5, message_index: 10 });
    const withInput = await view(atEnd.runId);
    expect(withInput.messages).toHaveLength(11);
    expect(withInput.messages[10]).toEqual({ role: 'user', content: 'And now in French.' });
    expect(await ownMessageRows(atEnd.runId)).toBe(1);

    // By message index: where a checkpoint ends.
    const byIndex = await engine.forkRun(source.run_id, { at: { messageIndex: 7 } });
    expect(byIndex.forkedFrom).toEqual({ run_id: source.run_id, checkpoint: 3, message_index: 7 });

    for (const [at, message] of [
      [{ checkpoint: 6 }, /at.checkpoint: run .* has checkpoints 1 to 5, not 6/],
      [{ checkpoint: 0 }, /at.checkpoint/],
      [
        { messageIndex: 2 },
        /at.message_index: no checkpoint .* ends at message 2 \(its checkpoints end at 3, 5, 7, 9, 10\)/,
      ],
      [{ messageIndex: 11 }, /at.message_index/],
    ] as const) {
      const refused = engine.forkRun(source.run_id, { at });
      await expect(refused).rejects.toBeInstanceOf(InvalidForkPointError);
      await expect(engine.forkRun(source.run_id, { at })).rejects.toThrow(message);
    }
    // A PENDING run has nothing to fork yet.
    const pending = await engine.createRun({ entity: RESEARCHER, input: INPUT });
    await expect(engine.forkRun(pending.runId)).rejects.toBeInstanceOf(RunNotContinuableError);
    // Nothing was written by the refusals: the source has the three forks that were made.
    expect((await view(source.run_id)).forks).toEqual([atEnd.runId, byIndex.runId]);
  });

  it('in tool-call mode, forked where a call was in flight, runs that call again; an input there is refused', async () => {
    const source = await completed(RESEARCHER, 'tool-call');
    // Each call's turn is committed before it runs: the checkpoint after the second turn holds
    // the fetch of result-a with no result yet.
    const inFlight = source.checkpoints.find((c) => {
      const last = source.messages[c.message_index - 1];
      return last?.role === 'assistant' && last.toolCalls?.[0]?.name === 'slow_fetch_detail';
    })!;
    expect(toolNames(source.messages.slice(0, inFlight.message_index))).toEqual([
      'slow_search',
      'slow_fetch_detail',
    ]);
    await expect(
      engine.forkRun(source.run_id, {
        at: { checkpoint: inFlight.seq },
        input: 'Also look at result-d.',
      }),
    ).rejects.toThrow(/at.checkpoint: message \d+ of run .* is inside a tool batch/);

    const fork = await engine.forkRun(source.run_id, { at: { checkpoint: inFlight.seq } });
    await engine.execute(fork.runId, { reason: 'run' });
    const done = await view(fork.runId);
    expect(done.status).toBe('COMPLETED');
    expect(done.content).toBe(source.content);
    // The fetch in flight at the point, then the two after it; the search is never run again.
    expect(executionsOf(done)).toEqual([
      'slow_fetch_detail',
      'slow_fetch_detail',
      'slow_fetch_detail',
    ]);
  });

  it('of a team keeps the member work whose result it holds, and delegates again what was in flight', async () => {
    const source = await completed(TEAM, 'tool-batch');
    const [member] = source.member_runs;
    expect(member!.status).toBe('COMPLETED');
    // The input with the delegation's turn (committed before it runs), its result, the summary.
    expect(source.checkpoints.map((c) => c.message_index)).toEqual([2, 3, 4]);
    const researched = ledger().length;

    // After the delegation's result, with a new question: nothing is delegated again.
    const after = await engine.forkRun(source.run_id, {
      at: { checkpoint: 2 },
      input: 'Summarize it again.',
    });
    await engine.execute(after.runId, { reason: 'run' });
    const afterView = await view(after.runId);
    expect(afterView.status).toBe('COMPLETED');
    expect(afterView.member_runs).toEqual([]);
    expect(ledger()).toHaveLength(researched);

    // While the delegation was in flight: the fork delegates again, to a member run of its own.
    const during = await engine.forkRun(source.run_id, { at: { checkpoint: 1 } });
    await engine.execute(during.runId, { reason: 'run' });
    const duringView = await view(during.runId);
    expect(duringView.status).toBe('COMPLETED');
    expect(duringView.content).toBe(source.content);
    expect(duringView.member_runs).toHaveLength(1);
    expect(duringView.member_runs[0]!.run_id).not.toBe(member!.run_id);
    expect(duringView.member_runs[0]!.parent_run_id).toBe(during.runId);
    expect(ledger()).toHaveLength(researched + 4);
    // The source and its member are untouched.
    const sourceAfter = await view(source.run_id);
    expect(sourceAfter.member_runs.map((m) => m.run_id)).toEqual([member!.run_id]);
    expect(sourceAfter.forks).toEqual([after.runId, during.runId]);
    // Both forks replay clean on the current code: the shared history and the fork's own part.
    for (const fork of [after, during])
      expect(await replayRun(createRegistry(), await exportRun(t.store, fork.runId))).toMatchObject(
        {
          ok: true,
        },
      );
    // A member run is forked through its team.
    await expect(engine.forkRun(member!.run_id)).rejects.toThrow(
      /is a member run: fork its team run/,
    );
  });

  it('of a fork reads through both sources', async () => {
    const source = await completed(RESEARCHER, 'tool-batch');
    const first = await engine.forkRun(source.run_id, { at: { checkpoint: 2 } });
    await engine.execute(first.runId, { reason: 'run' });
    const second = await engine.forkRun(first.runId, { at: { checkpoint: 3 } });
    expect(second.forkedFrom).toEqual({ run_id: first.runId, checkpoint: 3, message_index: 7 });
    const forked = await view(second.runId);
    const firstView = await view(first.runId);
    expect(forked.messages).toEqual(firstView.messages.slice(0, 7));
    expect(forked.messages.slice(0, 5)).toEqual(source.messages.slice(0, 5));
    await engine.execute(second.runId, { reason: 'run' });
    expect((await view(second.runId)).content).toBe(source.content);
    // Forked again inside what the first fork shares with its source: the source's messages.
    const inherited = await engine.forkRun(first.runId, { at: { checkpoint: 1 } });
    expect(inherited.forkedFrom).toEqual({ run_id: first.runId, checkpoint: 1, message_index: 3 });
    expect((await view(inherited.runId)).messages).toEqual(source.messages.slice(0, 3));
    // Pages of a fork's messages: the shared part read through its sources, then its own.
    const secondView = await view(second.runId);
    for (const [offset, limit] of [
      [0, 3],
      [4, 2],
      [6, 100],
    ] as const) {
      const page = await t.store.listRunMessages(second.runId, { offset, limit });
      expect(page.total).toBe(secondView.messages.length);
      expect(page.messages.map((m) => m.index)).toEqual(
        secondView.messages.slice(offset, offset + limit).map((_, i) => offset + i),
      );
      expect(page.messages.map((m) => m.message)).toEqual(
        secondView.messages.slice(offset, offset + limit),
      );
    }
  });

  it('keeps its source while it reads through it: retention prunes the fork first, and its source session cannot be deleted from under it', async () => {
    const source = await completed(RESEARCHER, 'tool-batch');
    const fork = await engine.forkRun(source.run_id, {
      at: { checkpoint: 2 },
      sessionId: 'another-session',
    });
    await engine.execute(fork.runId, { reason: 'run' });
    await expect(
      t.store.deleteSession({ tenantId: null, sessionId: source.session_id }),
    ).rejects.toBeInstanceOf(SessionHasForksError);
    expect((await view(source.run_id)).status).toBe('COMPLETED');

    const everything = { olderThan: new Date(Date.now() + 60_000) };
    // The first pass takes the fork only; the source goes at the next.
    expect(await t.store.pruneFinishedRuns({ ...everything, maxBatches: 1 })).toMatchObject({
      runs: 1,
    });
    expect(await t.store.getRun(fork.runId)).toBeUndefined();
    expect(await t.store.getRun(source.run_id)).toBeDefined();
    expect(await t.store.pruneFinishedRuns(everything)).toMatchObject({ runs: 1 });
    expect(await t.store.getRun(source.run_id)).toBeUndefined();
  });
});
