import { afterEach, describe, expect, it } from 'vitest';
import { createLiveSubscriber, type LiveEvent, type LiveSubscriber } from '@cairn/runtime';
import { requiresBackend, testRedisUrl } from '@cairn/services';
import { allTools, QUEUE_BACKENDS, RESEARCHER, startFleet, TEAM, type Fleet } from './fleet.js';

for (const backend of QUEUE_BACKENDS)
  describe(
    `client → queue → worker → Postgres (${backend} backend)`,
    requiresBackend(backend),
    () => {
      let fleet: Fleet | undefined;
      let live: LiveSubscriber | undefined;
      afterEach(async () => {
        await live?.close();
        await fleet?.stop();
        fleet = undefined;
      });

      it('runs the researcher agent and the research team to completion', async () => {
        fleet = await startFleet({ backend, toolDelayMs: 50 });
        await fleet.spawnWorker('w1');
        const agentRun = await fleet.client.enqueueRun({
          entity: RESEARCHER,
          input: "Research 'cairns'",
          checkpoint: 'tool-batch',
        });
        live = createLiveSubscriber({
          backend,
          databaseUrl: fleet.db.url,
          redisUrl: backend === 'redis' ? testRedisUrl() : undefined,
        });
        const published: LiveEvent[] = [];
        await live.subscribe(agentRun.runId, (event) => published.push(event));
        const teamRun = await fleet.client.enqueueRun({
          entity: TEAM,
          input: "Research 'durable queues'",
          checkpoint: 'tool-batch',
        });
        const [agentDone, teamDone] = await Promise.all([
          fleet.client.waitForRun(agentRun.runId, { timeoutMs: 30_000 }),
          fleet.client.waitForRun(teamRun.runId, { timeoutMs: 30_000 }),
        ]);
        expect(agentDone.status).toBe('COMPLETED');
        expect(agentDone.content).toContain('Research report');
        // the live channel carries the run's progress as it happens, without a read of Postgres
        await expect
          .poll(() => published.map((e) => e.type), { timeout: 5000 })
          .toContain('RunCompleted');
        expect(published.map((e) => e.type)).toContain('ToolCallStarted');
        expect(new Set(published.map((e) => e.runId))).toEqual(new Set([agentRun.runId]));
        expect(teamDone.status).toBe('COMPLETED');
        expect(teamDone.content).toContain('Summary');
        const view = (await fleet.client.getRun(teamRun.runId))!;
        expect(view.attempts.map((a) => [a.worker_id, a.reason])).toEqual([['w1', 'run']]);
        expect(view.member_runs).toHaveLength(1);
        expect(allTools(view).filter((t) => t.status === 'completed')).toHaveLength(5);
        const events = await fleet.client.listEvents(teamRun.runId);
        expect(events[0]?.type).toBe('RunStarted');
        expect(events.at(-1)?.type).toBe('RunCompleted');
        expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      });
    },
  );
