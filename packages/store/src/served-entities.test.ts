import {
  Agent,
  AmbiguousEntityError,
  definitionHashOf,
  EntityNotFoundError,
  Registry,
  Team,
} from '@cairn/engine';
import { ScriptedModel } from '@cairn/engine/testing';
import { describe, expect, it } from 'vitest';
import { EntityNotServedError } from './errors.js';
import { ENTITY_HEARTBEAT_MS, ServedEntityCatalog } from './served-entities.js';
import { useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

const model = new ScriptedModel({ decide: () => ({ text: 'ok' }) });
const teamWith = (name: string, members: Agent[]) => new Team({ name, model, members });

describe('ServedEntityCatalog names', () => {
  it('validates member paths and unique plain names from what a worker announced, and refuses a shared plain name naming the paths', async () => {
    const registry = new Registry({
      teams: [
        teamWith('team-a', [
          new Agent({ name: 'researcher', model }),
          new Agent({ name: 'writer', model }),
        ]),
        teamWith('team-b', [new Agent({ name: 'researcher', model })]),
      ],
    });
    const catalog = new ServedEntityCatalog(ctx.db);
    await catalog.record('worker-1', registry.describeAll());

    expect(await catalog.describe({ kind: 'agent', name: 'team-b/researcher' })).toMatchObject({
      name: 'team-b/researcher',
    });
    expect(await catalog.describe({ kind: 'agent', name: 'writer' })).toMatchObject({
      name: 'writer',
    });
    await expect(catalog.describe({ kind: 'agent', name: 'team-c/researcher' })).rejects.toThrow(
      EntityNotServedError,
    );
    await expect(catalog.describe({ kind: 'agent', name: 'editor' })).rejects.toThrow(
      EntityNotServedError,
    );
    const ambiguous = catalog.describe({ kind: 'agent', name: 'researcher' });
    await expect(ambiguous).rejects.toThrow(AmbiguousEntityError);
    await expect(ambiguous).rejects.toThrow(
      'agent "researcher" is ambiguous: use "team-a/researcher" or "team-b/researcher"',
    );
  });
});

describe('ServedEntityCatalog definition hash', () => {
  it('with no live worker, is the definition refreshed last: rolled back to v1, then every worker stopped, new runs still go to v1', async () => {
    const catalog = new ServedEntityCatalog(ctx.db);
    const [v1, v2] = ['Answer briefly.', 'Answer at length.'].map(
      (instructions) => new Agent({ name: 'answerer', instructions, model }),
    );
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);
    await catalog.record('old', new Registry({ agents: [v1!] }).describeAll());
    await catalog.record('new', new Registry({ agents: [v2!] }).describeAll());
    // v1 first seen a day ago, v2 an hour ago; rolled back: v1's workers refreshed last, 10 minutes ago, then all stopped.
    const seen = async (agent: Agent, first: Date, last: Date) =>
      ctx.db
        .updateTable('served_entities')
        .set({ first_seen_at: first, last_seen_at: last })
        .where('definition_hash', '=', definitionHashOf(agent))
        .execute();
    await seen(v1!, at(24 * 60), at(10));
    await seen(v2!, at(60), at(50));
    expect((await catalog.describe({ kind: 'agent', name: 'answerer' }))?.definitionHash).toBe(
      definitionHashOf(v1!),
    );
  });
});

describe('ServedEntityCatalog, a name no worker ever announced', () => {
  it('is accepted, with no definition hash and the default checkpoint mode, while no live worker has announced anything: a fresh store, then every worker gone quiet', async () => {
    const catalog = new ServedEntityCatalog(ctx.db);
    const ref = { kind: 'team', name: 'research-team' } as const;
    expect(await catalog.describe(ref)).toEqual({
      ...ref,
      checkpoint: 'tool-batch',
      definitionHash: null,
    });

    await catalog.record(
      'worker-1',
      new Registry({ agents: [new Agent({ name: 'answerer', model })] }).describeAll(),
    );
    await ctx.db
      .updateTable('served_entities')
      .set({ last_seen_at: new Date(Date.now() - 3 * ENTITY_HEARTBEAT_MS) })
      .execute();
    expect(await catalog.describe(ref)).toEqual({
      ...ref,
      checkpoint: 'tool-batch',
      definitionHash: null,
    });
  });

  it('is refused once live workers have announced theirs, naming what they serve (its kind first, top-level names first), at most ten and a count of the rest', async () => {
    const catalog = new ServedEntityCatalog(ctx.db);
    const agents = Array.from(
      { length: 12 },
      (_, i) => new Agent({ name: `agent-${String(i).padStart(2, '0')}`, model }),
    );
    const registry = new Registry({
      agents,
      teams: [teamWith('desk', [new Agent({ name: 'clerk', model })])],
    });
    await catalog.record('worker-1', registry.describeAll());

    const team = catalog.describe({ kind: 'team', name: 'dsek' });
    await expect(team).rejects.toThrow(EntityNotServedError);
    await expect(team).rejects.toThrow(
      'no team named "dsek" is served by the live workers; they serve team "desk", agent "agent-00", agent "agent-01", agent "agent-02", ' +
        'agent "agent-03", agent "agent-04", agent "agent-05", agent "agent-06", agent "agent-07", agent "agent-08" (and 5 more)',
    );
    const agent = catalog.describe({ kind: 'agent', name: 'desk/clark' });
    await expect(agent).rejects.toThrow(
      'no agent named "desk/clark" is served by the live workers; they serve agent "agent-00"',
    );
    // Still an EntityNotFoundError: the producer answers 404 entity_not_found.
    await expect(agent).rejects.toBeInstanceOf(EntityNotFoundError);
  });

  it('announced once, by a worker that is gone, is still accepted while other workers are live: its workers may be restarting', async () => {
    const catalog = new ServedEntityCatalog(ctx.db);
    const answerer = new Agent({ name: 'answerer', model });
    await catalog.record('pool-a', new Registry({ agents: [answerer] }).describeAll());
    await ctx.db
      .updateTable('served_entities')
      .set({ last_seen_at: new Date(Date.now() - 10 * ENTITY_HEARTBEAT_MS) })
      .execute();
    await catalog.record(
      'pool-b',
      new Registry({ agents: [new Agent({ name: 'other', model })] }).describeAll(),
    );
    expect(await catalog.describe({ kind: 'agent', name: 'answerer' })).toMatchObject({
      definitionHash: definitionHashOf(answerer),
    });
  });
});

describe('ServedEntityCatalog caps', () => {
  it("keeps an entity's caps beside its defaults as its worker announced them, and the one announced last wins", async () => {
    const catalog = new ServedEntityCatalog(ctx.db);
    const capped = (maxCostUsd: number) =>
      new Agent({
        name: 'capped',
        model,
        budget: { maxCostUsd: 1 },
        maxDurationMs: 60_000,
        caps: { budget: { maxCostUsd, maxTokens: 1000 }, maxDurationMs: 600_000 },
      });
    await catalog.record('worker-1', new Registry({ agents: [capped(5)] }).describeAll());
    expect(await catalog.describe({ kind: 'agent', name: 'capped' })).toMatchObject({
      budget: { maxCostMicroUsd: 1_000_000 },
      maxDurationMs: 60_000,
      caps: { budget: { maxCostMicroUsd: 5_000_000, maxTokens: 1000 }, maxDurationMs: 600_000 },
    });
    await catalog.record('worker-2', new Registry({ agents: [capped(2)] }).describeAll());
    const [listed] = await catalog.list();
    expect(listed?.caps).toEqual({
      budget: { maxTokens: 1000, maxCostMicroUsd: 2_000_000 },
      maxDurationMs: 600_000,
    });
  });
});
