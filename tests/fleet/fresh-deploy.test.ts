import { createRegistry } from '@cairn/research-team';
import { createDb, ServedEntityCatalog } from '@cairn/store';
import { afterEach, describe, expect, it } from 'vitest';
import { FLEET_BACKEND, startFleet, TEAM, type Fleet, type SpawnedProducer } from './fleet.js';

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});

/** POSTs a run of `kind`/`name` to the producer; the status and the JSON body. */
async function postRun(
  producer: SpawnedProducer,
  kind: 'agents' | 'teams',
  name: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${producer.baseUrl}/v1/${kind}/${encodeURIComponent(name)}/runs`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ input: 'Research X' }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** How many entities workers have announced in the fleet's store. */
async function announced(f: Fleet): Promise<number> {
  const db = createDb(f.db.url);
  try {
    return (await new ServedEntityCatalog(db).list()).length;
  } finally {
    await db.destroy();
  }
}

describe(`a fresh deploy: producer and worker starting together (${FLEET_BACKEND})`, () => {
  it('accepts a run posted while the worker is still starting (202, PENDING, no hash yet) and the worker completes it on its definition', async () => {
    fleet = await startFleet({ backend: FLEET_BACKEND, toolDelayMs: 0 });
    const f = fleet;
    const producer = await f.spawnProducer('producer');
    const starting = f.spawnWorker('w1');
    // Awaited below; a failure before that must not surface as an unhandled rejection after the fleet stops.
    starting.catch(() => undefined);
    // The worker has not announced anything yet: the post reaches a producer that knows no entity.
    expect(await announced(f)).toBe(0);
    const created = await postRun(producer, 'teams', TEAM.name);
    expect(created.status).toBe(202);
    const runId = created.body.run_id as string;
    expect(await f.client.getRun(runId)).toMatchObject({
      status: 'PENDING',
      definition_hash: null,
      checkpoint: 'tool-batch',
    });

    await starting;
    const done = await f.client.waitForRun(runId, { timeoutMs: 60_000 });
    expect(done.status).toBe('COMPLETED');
    // Stamped at its first claim with the definition the worker serves.
    expect(done.definitionHash).toBe(createRegistry().describe(TEAM)!.definitionHash);
  });

  it('queues a name no worker serves while none is live, visible as PENDING; the worker ends it in ERROR after the grace period; once workers are live the same name is a 404 listing what they serve', async () => {
    fleet = await startFleet({ backend: FLEET_BACKEND, toolDelayMs: 0 });
    const f = fleet;
    const producer = await f.spawnProducer('producer');
    const typo = await postRun(producer, 'teams', 'reserch-team');
    expect(typo.status).toBe(202);
    const runId = typo.body.run_id as string;
    expect(await f.client.getRun(runId)).toMatchObject({
      status: 'PENDING',
      entity: { kind: 'team', name: 'reserch-team' },
    });

    await f.spawnWorker('w1', { CAIRN_VERSION_GRACE_MS: '300' });
    const failed = await f.client.waitForRun(runId, { timeoutMs: 30_000 });
    expect(failed.status).toBe('ERROR');
    expect(failed.error).toMatchObject({
      name: 'EntityNotFoundError',
      message: expect.stringContaining('"reserch-team"'),
    });

    const refused = await postRun(producer, 'teams', 'reserch-team');
    expect(refused.status).toBe(404);
    expect(refused.body.error).toBe('entity_not_found');
    const message = refused.body.message as string;
    expect(message).toContain('no team named "reserch-team" is served by the live workers');
    expect(message).toContain('team "research-team"');
    expect(message).not.toContain('registry');
  });
});
