import { readFileSync } from 'node:fs';
import { afterAll, describe, it } from 'vitest';
import type { QueueBackendKind } from '@cairn/runtime';
import { freePort, requiresBackend } from '@cairn/services';
import { PostgresWebhookStore } from '@cairn/store';
import { QUEUE_BACKENDS, waitFor } from '../fleet/fleet.js';
import {
  finished,
  OPS_AGENT,
  pausedWith,
  startOpsFleet,
  type OpsFleet,
} from '../hitl/hitl-fleet.js';
import { WebhookReceiver } from './webhook-receiver.js';

/** Quick retries for a test: first retry after 200 ms, at most 1 s apart, dispatch every 200 ms. */
const WEBHOOK_ENV = {
  CAIRN_WEBHOOK_ALLOW_PRIVATE: 'true',
  CAIRN_WEBHOOK_BACKOFF_MS: '200',
  CAIRN_WEBHOOK_MAX_BACKOFF_MS: '1000',
  CAIRN_WEBHOOK_MAX_ATTEMPTS: '30',
  CAIRN_WEBHOOK_POLL_MS: '200',
  CAIRN_PUBLIC_URL: 'https://cairn.example/',
};

const fleets: OpsFleet[] = [];
const receivers: WebhookReceiver[] = [];
afterAll(async () => {
  await Promise.allSettled([
    ...fleets.map((fleet) => fleet.stop()),
    ...receivers.map((r) => r.down()),
  ]);
});

/** A fleet on the ops registry with quick webhook retries, and a receiver registered as an endpoint of the no-tenant runs. */
async function fleetWithReceiver(
  workers: number,
  backend: QueueBackendKind,
  env: Record<string, string> = {},
) {
  const [fleet, receiver] = await Promise.all([
    startOpsFleet({ workers, env: { ...WEBHOOK_ENV, ...env }, backend }),
    (async () => {
      const r = new WebhookReceiver();
      await r.up();
      return r;
    })(),
  ]);
  fleets.push(fleet);
  receivers.push(receiver);
  const webhooks = new PostgresWebhookStore(fleet.store.db);
  const { endpoint, secret } = await webhooks.createEndpoint({
    tenantId: null,
    url: receiver.url,
    events: [],
  });
  receiver.useSecret(secret);
  return { fleet, receiver, webhooks, endpoint, secret };
}

for (const backend of QUEUE_BACKENDS)
  describe.concurrent(`signed webhooks on a fleet (${backend})`, requiresBackend(backend), () => {
    it('a run paused for approval notifies with its pending actions and links; failed attempts and a receiver down for a while are retried with the same id until delivered, signed, in order', async ({
      expect,
    }) => {
      const metricsPort = await freePort();
      const { fleet, receiver, webhooks, endpoint, secret } = await fleetWithReceiver(1, backend, {
        CAIRN_METRICS_PORT: String(metricsPort),
      });
      receiver.failFirst = 2;
      const run = await fleet.client.enqueueRun({ entity: OPS_AGENT, input: 'restart api' });
      const [action] = await pausedWith(fleet, run.runId, 1);
      await waitFor(
        () => receiver.acceptedFor('run.paused', run.runId) !== undefined,
        60_000,
        'the run.paused delivery to be accepted',
      );
      const paused = receiver.acceptedFor('run.paused', run.runId)!;
      expect(paused.verified!.data).toMatchObject({
        run_id: run.runId,
        status: 'PAUSED',
        entity: { kind: 'agent', name: 'ops-agent' },
        pending_actions: [
          {
            action_id: action!.actionId,
            kind: 'approval',
            tool: 'restart_service',
            args: { service: 'api' },
          },
        ],
        links: {
          run_page: `https://cairn.example/ui/runs/${run.runId}`,
          decisions: `https://cairn.example/v1/runs/${run.runId}/decisions`,
        },
      });
      // Two 500s, then accepted: three attempts of one message, one id, each signed.
      const pausedAttempts = receiver.received.filter((r) => r.id === paused.id);
      expect(pausedAttempts.map((r) => r.status)).toEqual([500, 500, 204]);
      expect(pausedAttempts.every((r) => r.verified !== undefined)).toBe(true);

      // The receiver goes down; the run completes meanwhile; its notification waits for it.
      await receiver.down();
      receiver.failFirst = 0;
      await fleet.client.decide(run.runId, [
        { actionId: action!.actionId, decision: { type: 'approve' } },
      ]);
      expect((await finished(fleet, run.runId)).status).toBe('COMPLETED');
      await waitFor(
        async () =>
          (await webhooks.listAttempts(endpoint.endpoint_id)).filter(
            (a) => a.event_type === 'run.completed' && a.status_code === null,
          ).length >= 2,
        60_000,
        'two refused attempts of run.completed while the receiver is down',
      );
      await receiver.up();
      await waitFor(
        () => receiver.acceptedFor('run.completed', run.runId) !== undefined,
        60_000,
        'the run.completed delivery once the receiver is back',
      );
      const completed = receiver.acceptedFor('run.completed', run.runId)!;
      expect(completed.id).not.toBe(paused.id);
      expect(receiver.received.filter((r) => r.id === completed.id).every((r) => r.verified)).toBe(
        true,
      );
      // In order for this run: its pause was delivered before its completion.
      const order = receiver.accepted().map((r) => r.verified!.type);
      expect(order.indexOf('run.paused')).toBeLessThan(order.indexOf('run.completed'));

      // Each attempt recorded, newest first; the 500s with their code, the refused ones with their error.
      // An attempt is recorded once its answer is read: wait for both accepted ones.
      let attempts = await webhooks.listAttempts(endpoint.endpoint_id);
      await waitFor(
        async () =>
          (attempts = await webhooks.listAttempts(endpoint.endpoint_id)).filter(
            (a) => a.status_code === 204,
          ).length === 2,
        30_000,
        'both accepted attempts recorded',
      );
      const ofPaused = attempts.filter((a) => a.delivery_id === paused.id).reverse();
      expect(ofPaused.map((a) => [a.attempt, a.status_code])).toEqual([
        [1, 500],
        [2, 500],
        [3, 204],
      ]);
      const ofCompleted = attempts.filter((a) => a.delivery_id === completed.id).reverse();
      expect(ofCompleted.at(-1)).toMatchObject({ status_code: 204, error: null });
      expect(ofCompleted.slice(0, -1).every((a) => a.status_code === null && a.error)).toBe(true);

      // A manual redelivery sends the same message again, with its id.
      const before = receiver.received.length;
      expect(await webhooks.redeliver(endpoint.endpoint_id, completed.id)).toBe(true);
      await waitFor(() => receiver.received.length > before, 30_000, 'the redelivery');
      expect(receiver.received.at(-1)).toMatchObject({ id: completed.id, status: 204 });
      expect(receiver.received.at(-1)!.verified!.data).toEqual(completed.verified!.data);

      // The worker's metrics count every recorded attempt by outcome, with its latency.
      await waitFor(
        async () => (await webhooks.listAttempts(endpoint.endpoint_id)).length > attempts.length,
        30_000,
        'the redelivery recorded',
      );
      attempts = await webhooks.listAttempts(endpoint.endpoint_id);
      // The worker counts an attempt just after its row is stored: wait for the count to catch up.
      let scrape = '';
      const sample = (name: string) =>
        Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(scrape)?.[1] ?? NaN);
      await waitFor(
        async () => {
          scrape = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
          return (
            sample('cairn_webhook_attempts_total\\{outcome="delivered"\\}') +
              sample('cairn_webhook_attempts_total\\{outcome="failed"\\}') >=
            attempts.length
          );
        },
        30_000,
        'the worker to count every recorded attempt',
      );
      expect(sample('cairn_webhook_attempts_total\\{outcome="delivered"\\}')).toBe(
        attempts.filter((a) => a.error === null).length,
      );
      expect(sample('cairn_webhook_attempts_total\\{outcome="failed"\\}')).toBe(
        attempts.filter((a) => a.error !== null).length,
      );
      expect(sample('cairn_webhook_attempt_seconds_count\\{outcome="delivered"\\}')).toBe(3);

      // The secret appears in no worker log.
      for (const worker of fleet.workers)
        expect(readFileSync(worker.logFile, 'utf8')).not.toContain(secret.slice(6));
    });

    it("a run's later event waits while its earlier one is retried: run.completed, ready meanwhile, reaches the receiver only after run.paused was accepted", async ({
      expect,
    }) => {
      // Attempts enough that run.paused cannot give up while refused: a delivery that gave up
      // releases the run's later events (docs/operations.md), and 30 attempts last about 28 s,
      // which a run that is slow to complete outlasted (run.completed then went first).
      const { fleet, receiver } = await fleetWithReceiver(1, backend, {
        CAIRN_WEBHOOK_MAX_ATTEMPTS: '1000',
      });
      // run.paused: refused until run.completed is ready to go (its event turned into a job), then
      // accepted; run.completed: accepted at once. Released on that event, not after a count of
      // refusals: on a loaded machine the run may take longer to end than any fixed count lasts.
      receiver.failFirstOf = { 'run.paused': Number.MAX_SAFE_INTEGER };
      const run = await fleet.client.enqueueRun({ entity: OPS_AGENT, input: 'restart cache' });
      const [action] = await pausedWith(fleet, run.runId, 1);
      await fleet.client.decide(run.runId, [
        { actionId: action!.actionId, decision: { type: 'approve' } },
      ]);
      expect((await finished(fleet, run.runId)).status).toBe('COMPLETED');
      const completedDispatched = () =>
        fleet.store.db
          .selectFrom('webhook_events')
          .select('dispatched_at')
          .where('run_id', '=', run.runId)
          .where('type', '=', 'run.completed')
          .executeTakeFirst();
      await waitFor(
        async () => (await completedDispatched())?.dispatched_at != null,
        60_000,
        'the run.completed event to be dispatched',
      );
      expect(receiver.acceptedFor('run.completed', run.runId)).toBeUndefined();
      receiver.failFirstOf = {};
      await waitFor(
        () => receiver.acceptedFor('run.completed', run.runId) !== undefined,
        60_000,
        'the run.completed delivery',
      );
      const paused = receiver.acceptedFor('run.paused', run.runId)!;
      const ofRun = receiver.received.filter((r) => r.verified?.data.run_id === run.runId);
      const completedFirstSeen = ofRun.find((r) => r.verified!.type === 'run.completed')!;
      // Refused until released, then accepted; run.completed never tried before that.
      const pausedStatuses = ofRun.filter((r) => r.id === paused.id).map((r) => r.status);
      expect(pausedStatuses.at(-1)).toBe(204);
      expect(pausedStatuses.slice(0, -1).length).toBeGreaterThan(0);
      expect(pausedStatuses.slice(0, -1).every((status) => status === 500)).toBe(true);
      expect(completedFirstSeen.at).toBeGreaterThanOrEqual(paused.at);
      expect(ofRun.filter((r) => r.id === completedFirstSeen.id).map((r) => r.status)).toEqual([
        204,
      ]);
      // It was held, not late: its event had been turned into a job before run.paused was accepted.
      expect((await completedDispatched())!.dispatched_at!.getTime()).toBeLessThan(paused.at);
    });

    it('a worker SIGKILLed right after a run paused still leads to the notification: the event was committed with the pause', async ({
      expect,
    }) => {
      // The first worker dispatches once at its start, then not for ten minutes: the pause's event waits in the outbox.
      const { fleet, receiver } = await fleetWithReceiver(0, backend);
      const slow = await fleet.spawnWorker('slow-dispatch', {
        ...fleet.workerEnv,
        CAIRN_WEBHOOK_POLL_MS: '600000',
      });
      const run = await fleet.client.enqueueRun({ entity: OPS_AGENT, input: 'restart db' });
      await pausedWith(fleet, run.runId, 1);
      slow.proc.kill('SIGKILL');
      await slow.exited;
      const rows = await fleet.store.db
        .selectFrom('webhook_events')
        .select(['type', 'dispatched_at'])
        .where('run_id', '=', run.runId)
        .execute();
      expect(rows).toEqual([{ type: 'run.paused', dispatched_at: null }]);
      expect(receiver.received).toEqual([]);

      await fleet.spawnWorker('w-after', fleet.workerEnv);
      await waitFor(
        () => receiver.acceptedFor('run.paused', run.runId) !== undefined,
        60_000,
        'the run.paused delivery from the worker started after the kill',
      );
      expect(receiver.accepted()).toHaveLength(1);
    });
  });
