import { describe, expect, it } from 'vitest';
import { digestArgs } from '@cairn/engine';
import { batchDelta, newRun, useStoreTestContext } from '../test-support/store-test-context.js';
import { PostgresWebhookStore, type WebhookDelivery } from './postgres-webhook-store.js';
import { pruneFinishedRuns } from '../retention.js';
import { recordWebhookEvent } from './record-webhook-event.js';

const ctx = useStoreTestContext();

/** Every outbox event, in order. */
async function outbox() {
  return ctx.db
    .selectFrom('webhook_events')
    .select(['type', 'run_id', 'payload'])
    .orderBy('event_id')
    .execute();
}

/** A root run of `tenantId` claimed and paused on one approval. */
async function pausedRun(tenantId: string | null) {
  const run = await ctx.store.createRun(newRun({ tenantId }));
  const { epoch } = await ctx.store.claimRun(run.runId, { workerId: 'w1', reason: 'run' });
  await ctx.store.finishRun(run.runId, epoch, {
    status: 'PAUSED',
    content: null,
    error: null,
    delta: batchDelta(1),
    pendingActions: [
      {
        actionId: `act-${run.runId}`,
        kind: 'approval',
        memberPath: ['researcher'],
        toolCallId: 'call_1_1',
        tool: 'slow_search',
        args: { query: 'x' },
        argsDigest: digestArgs({ query: 'x' }),
        argsSchema: null,
        batch: 1,
        onTimeout: 'reject',
        expiresAt: null,
      },
    ],
  });
  return run.runId;
}

describe('webhook outbox', () => {
  it("records a root run's pause with its pending actions and its finish, in the same commit, only for a tenant with an endpoint that takes the type", async () => {
    const webhooks = new PostgresWebhookStore(ctx.db);
    await pausedRun('acme');
    expect(await outbox()).toEqual([]);

    await webhooks.createEndpoint({ tenantId: 'acme', url: 'https://a.example/h', events: [] });
    await webhooks.createEndpoint({
      tenantId: 'globex',
      url: 'https://g.example/h',
      events: ['run.completed'],
    });
    const acmeRun = await pausedRun('acme');
    const globexRun = await pausedRun('globex');
    expect(await outbox()).toEqual([
      {
        type: 'run.paused',
        run_id: acmeRun,
        payload: expect.objectContaining({
          run_id: acmeRun,
          tenant: 'acme',
          status: 'PAUSED',
          entity: { kind: 'agent', name: 'researcher' },
          pending_actions: [
            expect.objectContaining({
              action_id: `act-${acmeRun}`,
              kind: 'approval',
              tool: 'slow_search',
            }),
          ],
        }),
      },
    ]);

    const done = await ctx.store.createRun(newRun({ tenantId: 'globex' }));
    const { epoch } = await ctx.store.claimRun(done.runId, { workerId: 'w1', reason: 'run' });
    await ctx.store.commitCheckpoint(done.runId, epoch, batchDelta(1));
    expect(await outbox()).toHaveLength(1);
    await ctx.store.finishRun(done.runId, epoch, {
      status: 'COMPLETED',
      content: 'ok',
      error: null,
      delta: batchDelta(2),
    });
    expect((await outbox()).map((e) => [e.type, e.run_id])).toEqual([
      ['run.paused', acmeRun],
      ['run.completed', done.runId],
    ]);
    expect(globexRun).toBeTruthy();
  });

  it('recordWebhookEvent follows the same rule, and dispatching yields one delivery per endpoint, each once, redelivered on demand', async () => {
    const webhooks = new PostgresWebhookStore(ctx.db);
    const skipped = {
      tenantId: 'acme',
      type: 'schedule.run_skipped',
      payload: { schedule_id: 's1' },
    } as const;
    expect(await recordWebhookEvent(ctx.db, skipped)).toBeNull();
    const { endpoint: one, secret } = await webhooks.createEndpoint({
      tenantId: 'acme',
      url: 'https://a.example/1',
      events: ['schedule.run_skipped'],
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const { endpoint: two } = await webhooks.createEndpoint({
      tenantId: 'acme',
      url: 'https://a.example/2',
      events: [],
    });
    await webhooks.createEndpoint({ tenantId: 'acme', url: 'https://a.example/3', events: [] });
    await webhooks.updateEndpoint((await webhooks.listEndpoints('acme'))[2]!.endpoint_id, {
      disabled: true,
    });
    expect(JSON.stringify(await webhooks.listEndpoints())).not.toContain(secret);
    const eventId = await ctx.db.transaction().execute((trx) => recordWebhookEvent(trx, skipped));
    expect(eventId).toMatch(/^\d+$/);

    const added: WebhookDelivery[] = [];
    expect(await webhooks.dispatchPending(10, async (d) => void added.push(...d))).toBe(1);
    expect(await webhooks.dispatchPending(10, async (d) => void added.push(...d))).toBe(0);
    const messageId = `msg_${eventId}`;
    expect(added.map((d) => [d.jobId, d.messageId, d.type]).sort()).toEqual(
      [
        [`${messageId}.${one.endpoint_id}`, messageId, 'schedule.run_skipped'],
        [`${messageId}.${two.endpoint_id}`, messageId, 'schedule.run_skipped'],
      ].sort(),
    );

    // A failed add marks nothing: the event is taken again.
    expect(await webhooks.redeliver(one.endpoint_id, messageId)).toBe(false);
    await webhooks.recordAttempt({
      endpointId: one.endpoint_id,
      messageId,
      eventType: 'schedule.run_skipped',
      attempt: 1,
      statusCode: 500,
      latencyMs: 12.4,
      error: 'HTTP 500',
    });
    expect(await webhooks.listAttempts(one.endpoint_id)).toMatchObject([
      { delivery_id: messageId, attempt: 1, status_code: 500, latency_ms: 12, error: 'HTTP 500' },
    ]);
    expect(await webhooks.redeliver(one.endpoint_id, messageId)).toBe(true);
    await expect(
      webhooks.dispatchPending(10, () => Promise.reject(new Error('redis down'))),
    ).rejects.toThrow('redis down');
    const again: WebhookDelivery[] = [];
    expect(await webhooks.dispatchPending(10, async (d) => void again.push(...d))).toBe(1);
    expect(again).toMatchObject([
      { messageId, endpointId: one.endpoint_id, payload: { schedule_id: 's1' } },
    ]);
    expect(again[0]!.jobId).not.toBe(`${messageId}.${one.endpoint_id}`);
    expect(await webhooks.deleteEndpoint(one.endpoint_id)).toBe(true);
    expect(await webhooks.listAttempts(one.endpoint_id)).toEqual([]);
  });

  it('retention deletes dispatched events and attempts older than its cutoff, and keeps an event not yet dispatched', async () => {
    const webhooks = new PostgresWebhookStore(ctx.db);
    const { endpoint } = await webhooks.createEndpoint({
      tenantId: null,
      url: 'https://a.example/h',
      events: [],
    });
    const record = () =>
      recordWebhookEvent(ctx.db, { tenantId: null, type: 'run.completed', payload: {} });
    await record();
    await webhooks.dispatchPending(10, () => Promise.resolve());
    await record();
    await webhooks.recordAttempt({
      endpointId: endpoint.endpoint_id,
      messageId: 'msg_1',
      eventType: 'run.completed',
      attempt: 1,
      statusCode: 200,
      latencyMs: 3,
      error: null,
    });
    await pruneFinishedRuns(ctx.db, { olderThan: new Date(Date.now() + 60_000), batchSize: 1 });
    expect(await ctx.db.selectFrom('webhook_events').select(['dispatched_at']).execute()).toEqual([
      { dispatched_at: null },
    ]);
    expect(await webhooks.listAttempts(endpoint.endpoint_id)).toEqual([]);
  });

  it("types a budget pause run.budget_paused and a cancel run.cancelled; a member run's own change records nothing", async () => {
    const webhooks = new PostgresWebhookStore(ctx.db);
    await webhooks.createEndpoint({ tenantId: 'acme', url: 'https://a.example/h', events: [] });
    const team = await ctx.store.createRun(
      newRun({ tenantId: 'acme', entity: { kind: 'team', name: 'research-team' } }),
    );
    const teamClaim = await ctx.store.claimRun(team.runId, { workerId: 'w1', reason: 'run' });
    const member = await ctx.store.createRun(
      newRun({ tenantId: 'acme', sessionId: team.sessionId, parentRunId: team.runId }),
    );
    const memberClaim = await ctx.store.claimRun(member.runId, { workerId: 'w1', reason: 'run' });
    await ctx.store.finishRun(member.runId, memberClaim.epoch, {
      status: 'COMPLETED',
      content: 'found',
      error: null,
      delta: batchDelta(1),
    });
    expect(await outbox()).toEqual([]);
    await ctx.store.finishRun(team.runId, teamClaim.epoch, {
      status: 'PAUSED',
      content: null,
      error: null,
      delta: batchDelta(2),
      pendingActions: [
        {
          actionId: 'act-budget',
          kind: 'budget',
          memberPath: ['research-team'],
          toolCallId: 'budget-1',
          tool: 'budget',
          args: { spent: 1 },
          argsDigest: digestArgs({ spent: 1 }),
          argsSchema: null,
          batch: 2,
          onTimeout: 'reject',
          expiresAt: null,
        },
      ],
    });
    await ctx.store.forceCancel(team.runId);
    expect((await outbox()).map((e) => [e.type, e.run_id])).toEqual([
      ['run.budget_paused', team.runId],
      ['run.cancelled', team.runId],
    ]);
  });
});
