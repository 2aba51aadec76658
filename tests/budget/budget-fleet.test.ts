/**
 * A run's budget with real worker and producer processes (docs/spend.md):
 * created over HTTP with a `budget`, paused by its worker before the model
 * request that would pass it, decided through the producer's decisions
 * endpoint, and SIGKILLed while paused and after the approval. The tests
 * share one provider, database and producer; each starts its own workers,
 * stopped after it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_BACKEND, holderOf, waitFor, type SpawnedProducer } from '../fleet/fleet.js';
import {
  budgetPaused,
  post,
  SPEND_MODEL,
  startSpendFleet,
  type SpendFleet,
} from './spend-fleet.js';

const RESEARCHER_RUNS = '/v1/agents/researcher/runs';
const INPUT = "Research 'cairns'";
/** Workers start and a run is recovered after a SIGKILL: a loaded machine takes its time. */
const TEST_TIMEOUT_MS = 120_000;

let spend: SpendFleet;
let producer: SpawnedProducer;
beforeAll(async () => {
  spend = await startSpendFleet({ latencyMs: 100 });
  producer = await spend.fleet.spawnProducer('p');
});
afterEach(() => spend?.fleet.stopWorkers());
afterAll(() => spend?.stop());

/** How many tool executions the fleet's ledger holds. */
function executions(ledger: Map<string, number>): number {
  return [...ledger.values()].reduce((a, b) => a + b, 0);
}

/** The ids of the fleet's runs, newest first. */
async function runIds(): Promise<string[]> {
  return (await spend.fleet.client.listRuns({ limit: 50 })).runs.map((r) => r.run_id);
}

describe(`a run paused for its budget, on worker and producer processes (${FLEET_BACKEND})`, () => {
  it(
    'survives SIGKILL of its worker while paused and after the approval: it completes once, no tool batch run twice',
    async () => {
      const { fleet, server, gate, workerEnv } = spend;
      // What the other tests billed and executed on the shared provider and ledger.
      const billedBefore = server.quota.tokens(SPEND_MODEL);
      const executedBefore = executions(fleet.ledger());
      // Three workers: the run's, SIGKILLed while it is paused; the approved run's, SIGKILLed with its
      // request in flight; and the one that recovers it.
      await Promise.all(['a', 'b', 'c'].map((name) => fleet.spawnWorker(name, workerEnv)));

      // Room for the first request (about $0.47 with its estimate), not for the second on top of
      // what the first cost (about $0.23 + $0.55).
      const created = await post(producer.baseUrl, RESEARCHER_RUNS, {
        input: INPUT,
        checkpoint: 'tool-batch',
        budget: { max_cost_usd: 0.63 },
      });
      expect(created.status).toBe(202);
      const runId = created.body['run_id'] as string;
      const action = await budgetPaused(fleet, runId);
      const paused = (await fleet.client.getRun(runId))!;
      // It stopped after its first batch, before asking the model again; what it spent is what was billed.
      expect(paused.tools.map((t) => t.name)).toEqual(['slow_search']);
      expect(paused.usage.total_tokens).toBe(server.quota.tokens(SPEND_MODEL) - billedBefore);
      expect(action.args).toEqual({
        scope: 'run',
        spent: { tokens: paused.usage.total_tokens, cost_usd: paused.usage.cost_usd },
        budget: { max_tokens: null, max_cost_usd: 0.63 },
      });
      expect(paused.usage.cost_usd).toBeGreaterThan(0);

      // Its worker dies while the run waits for a person; the run needs none.
      const first = fleet.workers.find((w) => w.id === paused.attempts[0]!.worker_id)!;
      first.kill('SIGKILL');
      await first.exited;

      const decisions = `/v1/runs/${runId}/decisions`;
      // A raise that is not above what was spent is refused, naming the limit; nothing is recorded.
      const notAbove = await post(producer.baseUrl, decisions, {
        decisions: [
          {
            action_id: action.actionId,
            type: 'approve',
            budget: { max_cost_usd: paused.usage.cost_usd },
          },
        ],
      });
      expect(notAbove).toMatchObject({ status: 422, body: { error: 'invalid_decision' } });
      expect(notAbove.body['message']).toContain(
        `budget.max_cost_usd (${paused.usage.cost_usd}) must be above what the run spent`,
      );
      const malformed = await post(producer.baseUrl, decisions, {
        decisions: [{ action_id: action.actionId, type: 'approve', budget: { max_cost_usd: -2 } }],
      });
      expect(malformed.status).toBe(400);
      expect(malformed.body['issues']).toEqual([
        { path: 'decisions.0.budget.max_cost_usd', message: expect.any(String) },
      ]);
      // Bad budgets on create are 400s naming the field, and create nothing.
      const listed = await runIds();
      expect(listed).toContain(runId);
      for (const [budget, path] of [
        [{ max_cost_usd: -1 }, 'budget.max_cost_usd'],
        [{ max_cost_usd: 'lots' }, 'budget.max_cost_usd'],
        [{ max_tokens: 1.5 }, 'budget.max_tokens'],
        [{ max_tokens: 0 }, 'budget.max_tokens'],
        [{ max_cost: 1 }, 'budget.max_cost'],
        [{ max_cost_usd: 1, decision_timeout_ms: 0 }, 'budget.decision_timeout_ms'],
        [{ decision_timeout_ms: 1000 }, 'budget'],
        [{}, 'budget'],
      ] as const) {
        const refused = await post(producer.baseUrl, RESEARCHER_RUNS, { input: INPUT, budget });
        expect(refused.status, JSON.stringify(budget)).toBe(400);
        expect(refused.body['error']).toBe('invalid_body');
        expect((refused.body['issues'] as { path: string }[]).map((i) => i.path)).toContain(path);
      }
      expect(await runIds()).toEqual(listed);
      expect((await fleet.store.getRun(runId))!.status).toBe('PAUSED');
      expect(await fleet.client.listPendingActions(runId)).toHaveLength(1);

      // The resumed run's next model request will be held at the provider's door.
      gate.hold(INPUT);
      const approved = await post(producer.baseUrl, decisions, {
        decisions: [{ action_id: action.actionId, type: 'approve', budget: { max_cost_usd: 100 } }],
      });
      expect(approved).toMatchObject({
        status: 200,
        body: { applied: [action.actionId], pending: 0 },
      });

      // While it is in flight (every batch before it committed), SIGKILL the worker holding the run.
      await waitFor(() => gate.held() === 1, 30_000, "the resumed run's model request");
      const holder = holderOf(await fleet.client.getRun(runId));
      const victim = fleet.workers.find((w) => w.id === holder)!;
      victim.kill('SIGKILL');
      await victim.exited;
      gate.release();

      const done = await fleet.client.waitForRun(runId, { timeoutMs: 60_000 });
      expect(done.status).toBe('COMPLETED');
      const view = (await fleet.client.getRun(runId))!;
      expect(view.content).toContain("Top 3 results for 'cairns': result-a, result-b, result-c");
      expect(view.content).toContain('Detail for result-c: lorem ipsum dolor sit amet');
      expect(view.budget).toEqual({
        max_tokens: null,
        max_cost_usd: 100,
        decision_timeout_ms: null,
      });
      // Started by the first, resumed by the approval on the victim, recovered by the third worker.
      const attempts = view.attempts.map((a) => [a.reason, a.worker_id]);
      expect(attempts.slice(0, 2)).toEqual([
        ['run', first.id],
        ['continue', victim.id],
      ]);
      expect(attempts).toHaveLength(3);
      expect(['recovered', 'reconciled']).toContain(attempts[2]![0]);
      expect(attempts[2]![1]).not.toBe(victim.id);
      expect(attempts[2]![1]).not.toBe(first.id);
      // One budget pause, decided once: the raised budget held to the end.
      const actions = await fleet.store.listRunActions(runId);
      expect(actions.map((a) => [a.kind, a.status])).toEqual([['budget', 'decided']]);

      // Every call in the history executed exactly once, and nothing else did: no batch ran twice.
      expect(view.tools.map((t) => t.name)).toEqual([
        'slow_search',
        'slow_fetch_detail',
        'slow_fetch_detail',
        'slow_fetch_detail',
      ]);
      const ledger = fleet.ledger();
      for (const call of view.tools)
        expect(ledger.get(call.idempotency_key), `${call.name} ${call.idempotency_key}`).toBe(1);
      expect(executions(ledger) - executedBefore).toBe(view.tools.length);
      // The usage is what the provider billed, less at most the answer the killed worker never committed.
      expect(view.usage.total_tokens).toBeLessThanOrEqual(
        server.quota.tokens(SPEND_MODEL) - billedBefore,
      );
      expect(view.usage.total_tokens).toBeGreaterThan(paused.usage.total_tokens);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a budget pause nobody decides within decision_timeout_ms is decided as rejected: the run ends in ERROR',
    async () => {
      const { fleet, workerEnv } = spend;
      await fleet.spawnWorker('d', workerEnv);

      const created = await post(producer.baseUrl, RESEARCHER_RUNS, {
        input: INPUT,
        budget: { max_tokens: 1, decision_timeout_ms: 1500 },
      });
      expect(created.status).toBe(202);
      const runId = created.body['run_id'] as string;
      const action = await budgetPaused(fleet, runId);
      expect(action.expiresAt).toBeInstanceOf(Date);
      const paused = (await fleet.client.getRun(runId))!;
      expect(paused.budget).toEqual({
        max_tokens: 1,
        max_cost_usd: null,
        decision_timeout_ms: 1500,
      });
      const waited = action.expiresAt!.getTime() - Date.parse(paused.attempts[0]!.started_at);
      expect(waited).toBeGreaterThanOrEqual(1500);

      // Nobody decides: the expiry decides it as rejected and the run resumes, to end.
      await waitFor(
        async () => (await fleet.store.getRun(runId))?.status === 'ERROR',
        60_000,
        'the run ended by its expired budget action',
      );
      const view = (await fleet.client.getRun(runId))!;
      expect(view.error).toMatchObject({ name: 'BudgetExceededError' });
      expect(view.error?.message).toContain('approval timed out');
      // Nothing was asked of the model: the first request would already have passed the budget.
      expect(view.usage.total_tokens).toBe(0);
      const actions = await fleet.store.listRunActions(runId);
      expect(actions.map((a) => [a.kind, a.status])).toEqual([['budget', 'expired']]);
      const events = await fleet.client.listEvents(runId);
      expect(events.filter((e) => e.type === 'ActionExpired').map((e) => e.data)).toMatchObject([
        { action_id: action.actionId },
      ]);
      // Too late to decide: the action expired.
      const late = await post(producer.baseUrl, `/v1/runs/${runId}/decisions`, {
        decisions: [
          { action_id: action.actionId, type: 'approve', budget: { max_tokens: 10_000 } },
        ],
      });
      expect(late.status).toBe(410);
    },
    TEST_TIMEOUT_MS,
  );
});
