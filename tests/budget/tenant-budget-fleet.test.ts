/**
 * Tenant day budgets across a fleet (docs/spend.md): two producer processes
 * and two worker processes on one database, `CAIRN_TENANT_BUDGETS` on all of
 * them, tenants by their API keys. The day's spend is counted by the
 * workers' commits, whoever created the runs.
 */
import { BudgetExceededError, TENANT_SPEND_REFRESH_MS } from '@cairn/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { FLEET_BACKEND, waitFor, type SpawnedProducer } from '../fleet/fleet.js';
import {
  budgetPaused,
  micro,
  post,
  secondsToNextUtcDay,
  SPEND_MODEL,
  startSpendFleet,
  utcToday,
  type SpendFleet,
} from './spend-fleet.js';

/** A researcher run costs about $2 (five requests): one run alone spends acme's day on its way. */
const TENANT_BUDGETS = 'acme:0.8,globex:100';
const API_KEYS = 'admin-key,acme:acme-key,globex:globex-key';
const RESEARCHER_RUNS = '/v1/agents/researcher/runs';
/** Four processes start and four runs go through: a loaded machine takes its time. */
const TEST_TIMEOUT_MS = 120_000;

let spend: SpendFleet | undefined;
afterEach(async () => {
  await spend?.stop();
  spend = undefined;
});

function create(producer: SpawnedProducer, key: string, input = "Research 'cairns'") {
  return post(producer.baseUrl, RESEARCHER_RUNS, { input, checkpoint: 'tool-batch' }, key);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

describe(`tenant day budgets across two producers and two workers (${FLEET_BACKEND})`, () => {
  it(
    "once a tenant's day is spent through runs made via either producer, its running runs pause with a tenant budget action and both producers refuse its new runs (429, Retry-After) but take another tenant's",
    async () => {
      spend = await startSpendFleet({
        latencyMs: 100,
        env: { CAIRN_TENANT_BUDGETS: TENANT_BUDGETS },
      });
      const { fleet, server, gate, workerEnv } = spend;
      const producerEnv = { CAIRN_API_KEYS: API_KEYS, CAIRN_TENANT_BUDGETS: TENANT_BUDGETS };
      const [p1, p2] = await Promise.all([
        fleet.spawnProducer('p1', { env: producerEnv }),
        fleet.spawnProducer('p2', { env: producerEnv }),
        fleet.spawnWorker('a', workerEnv),
        fleet.spawnWorker('b', workerEnv),
      ]);

      // X, made through p1, asks the model once; its answer is held back at the provider's door...
      gate.hold('slowpoke');
      const x = await create(p1, 'acme-key', "Research 'slowpoke'");
      expect(x.status).toBe(202);
      await waitFor(() => gate.held() === 1, 30_000, "X's first model request");
      const heldAt = Date.now();
      // ...while Y, made through p2, spends acme's day by itself and pauses at its next request.
      const y = await create(p2, 'acme-key', "Research 'cairns'");
      expect(y.status).toBe(202);
      const acmeRuns = [x.body['run_id'] as string, y.body['run_id'] as string];
      const yAction = await budgetPaused(fleet, acmeRuns[1]!);
      // X's worker read acme's day (nothing spent) before X's request went out, and reads it again
      // once that read is TENANT_SPEND_REFRESH_MS old: X runs on once that is so. A wait on time, as
      // the rule it meets is one of time (the read's age; no process shows it); Y's run has mostly
      // taken that long already.
      await sleep(heldAt + TENANT_SPEND_REFRESH_MS + 100 - Date.now());
      gate.release();
      const xAction = await budgetPaused(fleet, acmeRuns[0]!);
      const actions = [xAction, yAction];
      const views = await Promise.all(acmeRuns.map(async (id) => (await fleet.client.getRun(id))!));
      for (const [i, action] of actions.entries()) {
        // Paused before its answer, with what the tenant's day shows and its budget.
        expect(views[i]!.content).toBeNull();
        expect(action.args).toMatchObject({
          scope: 'tenant',
          tenant: 'acme',
          day: utcToday(),
          budget: { max_cost_usd: 0.8 },
        });
        expect(
          (action.args as { spent: { cost_usd: number } }).spent.cost_usd,
        ).toBeGreaterThanOrEqual(0.8);
      }
      // X paused at its second request on what the rest of the fleet spent: alone it had spent a quarter of the day.
      expect(views[0]!.tools.map((t) => t.name)).toEqual(['slow_search']);
      expect(views[0]!.usage.cost_usd).toBeLessThan(0.3);
      // Counted fleet-wide to the micro-dollar: every commit of both runs, whichever worker ran them.
      const acmeDay = await fleet.store.tenantDaySpend('acme');
      expect(acmeDay.day).toBe(utcToday());
      expect(acmeDay.costMicroUsd).toBe(
        views.reduce((sum, view) => sum + micro(view.usage.cost_usd), 0),
      );
      expect(acmeDay.costMicroUsd).toBeGreaterThanOrEqual(micro(0.8));

      // Both producers refuse acme's new runs until the next UTC day, and take globex's.
      const globexRuns: string[] = [];
      for (const producer of [p1, p2]) {
        const refused = await create(producer, 'acme-key');
        expect(refused).toMatchObject({
          status: 429,
          body: {
            error: 'budget_exhausted',
            budget: {
              scope: 'tenant',
              tenant: 'acme',
              day: utcToday(),
              spent_usd: acmeDay.costMicroUsd / 1_000_000,
              max_cost_usd: 0.8,
            },
          },
        });
        expect(refused.body['message']).toContain('tenant acme has spent its budget');
        expect(Math.abs(Number(refused.retryAfter) - secondsToNextUtcDay())).toBeLessThan(5);
        const taken = await create(producer, 'globex-key');
        expect(taken.status).toBe(202);
        globexRuns.push(taken.body['run_id'] as string);
      }
      const acmeListed = await fleet.client.listRuns({ limit: 20, tenantId: 'acme' });
      expect(acmeListed.runs.map((r) => r.run_id).sort()).toEqual([...acmeRuns].sort());

      // Only an admin key decides a tenant's spent day: acme's own key would lift its day budget (403, still pending).
      const [first, second] = acmeRuns as [string, string];
      for (const decision of [{ type: 'approve' }, { type: 'reject' }])
        expect(
          await post(
            p2.baseUrl,
            `/v1/runs/${first}/decisions`,
            { decisions: [{ action_id: actions[0]!.actionId, ...decision }] },
            'acme-key',
          ),
        ).toMatchObject({ status: 403, body: { error: 'forbidden' } });
      // A decision does not raise a tenant's day (422); approved as is, a run goes on for the rest of the day.
      const raise = await post(
        p2.baseUrl,
        `/v1/runs/${first}/decisions`,
        {
          decisions: [
            { action_id: actions[0]!.actionId, type: 'approve', budget: { max_cost_usd: 9 } },
          ],
        },
        'admin-key',
      );
      expect(raise).toMatchObject({ status: 422, body: { error: 'invalid_decision' } });
      expect(raise.body['message']).toContain(
        "tenant acme's day budget ($0.8, CAIRN_TENANT_BUDGETS) is not raised by a decision",
      );
      const attemptsBefore = (await fleet.client.getRun(first))!.attempts.length;
      const approved = await post(
        p2.baseUrl,
        `/v1/runs/${first}/decisions`,
        { decisions: [{ action_id: actions[0]!.actionId, type: 'approve' }] },
        'admin-key',
      );
      expect(approved).toMatchObject({ status: 200, body: { pending: 0 } });
      const rejected = await post(
        p1.baseUrl,
        `/v1/runs/${second}/decisions`,
        {
          decisions: [
            { action_id: actions[1]!.actionId, type: 'reject', message: 'acme is done for today' },
          ],
        },
        'admin-key',
      );
      expect(rejected).toMatchObject({ status: 200, body: { pending: 0 } });

      // Approved, the run stays PAUSED until a worker claims its resume.
      await waitFor(
        async () => (await fleet.client.getRun(first))!.attempts.length > attemptsBefore,
        60_000,
        'a worker to claim the approved run',
      );
      const approvedRun = await fleet.client.waitForRun(first, { timeoutMs: 60_000 });
      expect(approvedRun.status).toBe('COMPLETED');
      expect(approvedRun.content).toContain('Detail for result-c: lorem ipsum dolor sit amet');
      // Not paused again that day: its one budget action is the one approved.
      expect((await fleet.store.listRunActions(first)).map((a) => [a.kind, a.status])).toEqual([
        ['budget', 'decided'],
      ]);
      const rejectedRun = await fleet.client.waitForRun(second, { timeoutMs: 60_000 });
      expect(rejectedRun.status).toBe('ERROR');
      expect(rejectedRun.error).toMatchObject({ name: BudgetExceededError.name });
      expect(rejectedRun.error!.message).toContain("its tenant's day budget is spent");
      expect(rejectedRun.error!.message).toContain('acme is done for today');

      // globex is not held back by acme's day: its runs complete without a pause.
      for (const runId of globexRuns) {
        expect((await fleet.client.waitForRun(runId, { timeoutMs: 60_000 })).status).toBe(
          'COMPLETED',
        );
        expect(await fleet.store.listRunActions(runId)).toEqual([]);
      }

      // Each tenant's day is what its runs cost, the approved run's last requests included, and
      // together exactly what the provider billed at the price (a thousandth of a dollar a token).
      const costOf = async (ids: string[]) => {
        let sum = 0;
        for (const id of ids) sum += micro((await fleet.client.getRun(id))!.usage.cost_usd);
        return sum;
      };
      const acmeTotal = (await fleet.store.tenantDaySpend('acme')).costMicroUsd;
      const globexTotal = (await fleet.store.tenantDaySpend('globex')).costMicroUsd;
      expect(acmeTotal).toBe(await costOf(acmeRuns));
      expect(acmeTotal).toBeGreaterThan(acmeDay.costMicroUsd);
      expect(globexTotal).toBe(await costOf(globexRuns));
      expect(acmeTotal + globexTotal).toBe(server.quota.tokens(SPEND_MODEL) * 1000);
    },
    TEST_TIMEOUT_MS,
  );
});
