import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { allTools, FLEET_BACKEND, holderOf, startFleet, waitFor, type Fleet } from './fleet.js';

const SCOPED_REGISTRY = fileURLToPath(new URL('./scoped-names-registry.ts', import.meta.url));

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});

it(`two teams each run their own researcher; a SIGKILL mid-member resumes that team's researcher, not the other's (${FLEET_BACKEND})`, async () => {
  fleet = await startFleet({ backend: FLEET_BACKEND, registryModule: SCOPED_REGISTRY });
  await fleet.spawnWorker('a');
  await fleet.spawnWorker('b');
  const web = await fleet.client.enqueueRun({
    entity: { kind: 'team', name: 'web-team' },
    input: 'tides',
  });
  const papers = await fleet.client.enqueueRun({
    entity: { kind: 'team', name: 'paper-team' },
    input: 'tides',
  });

  // Kill the worker holding the web team once its researcher committed its first lookup.
  let holder: string | undefined;
  let memberId: string | undefined;
  await waitFor(
    async () => {
      const view = await fleet!.client.getRun(web.runId);
      holder = holderOf(view);
      memberId = view?.member_runs[0]?.run_id;
      return (
        holder !== undefined && (view?.member_runs[0]?.last_checkpoint_at_message_index ?? 0) >= 3
      );
    },
    20_000,
    "the web team's researcher to commit its first lookup",
  );
  const victim = fleet.workers.find((w) => w.id === holder)!;
  victim.kill('SIGKILL');
  await victim.exited;

  for (const run of [web, papers])
    expect((await fleet.client.waitForRun(run.runId, { timeoutMs: 40_000 })).status).toBe(
      'COMPLETED',
    );
  const webView = (await fleet.client.getRun(web.runId))!;
  const paperView = (await fleet.client.getRun(papers.runId))!;
  expect(webView.content).toBe(
    'web-team: web researcher: the web on tides (pass 1); the web on tides (pass 2)',
  );
  expect(paperView.content).toBe(
    'paper-team: paper researcher: the papers on tides (pass 1); the papers on tides (pass 2)',
  );

  const [webMember] = webView.member_runs;
  const [paperMember] = paperView.member_runs;
  expect(webMember!.entity).toEqual({ kind: 'agent', name: 'web-team/researcher' });
  expect(paperMember!.entity).toEqual({ kind: 'agent', name: 'paper-team/researcher' });
  // The same member run resumed (not a new one), with its own team's tool only.
  expect(webMember!.run_id).toBe(memberId);
  expect(webMember!.attempts.map((a) => a.reason)).toContain('recovered');
  expect(webMember!.tools.map((t) => t.name)).toEqual(['search_web', 'search_web']);
  expect(paperMember!.tools.map((t) => t.name)).toEqual(['search_papers', 'search_papers']);
  // The lookup committed before the kill did not run again.
  const ledger = fleet.ledger();
  expect(ledger.get(webMember!.tools[0]!.idempotency_key)).toBe(1);
  expect(allTools(paperView).every((t) => t.status === 'completed')).toBe(true);
});
