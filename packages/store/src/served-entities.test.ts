import { Agent, AmbiguousEntityError, Registry, Team } from '@cairn/engine';
import { ScriptedModel } from '@cairn/engine/testing';
import { describe, expect, it } from 'vitest';
import { ServedEntityCatalog } from './served-entities.js';
import { useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

const model = new ScriptedModel({ decide: () => ({ text: 'ok' }) });
const teamWith = (name: string, members: Agent[]) => new Team({ name, model, members });

describe('ServedEntityCatalog names', () => {
  it('validates member paths and unique plain names from what a worker announced, and refuses a shared plain name naming the paths', async () => {
    const registry = new Registry({
      teams: [
        teamWith('team-a', [new Agent({ name: 'researcher', model }), new Agent({ name: 'writer', model })]),
        teamWith('team-b', [new Agent({ name: 'researcher', model })]),
      ],
    });
    const catalog = new ServedEntityCatalog(ctx.db);
    await catalog.record('worker-1', registry.describeAll());

    expect(await catalog.describe({ kind: 'agent', name: 'team-b/researcher' })).toMatchObject({ name: 'team-b/researcher' });
    expect(await catalog.describe({ kind: 'agent', name: 'writer' })).toMatchObject({ name: 'writer' });
    expect(await catalog.describe({ kind: 'agent', name: 'team-c/researcher' })).toBeUndefined();
    expect(await catalog.describe({ kind: 'agent', name: 'editor' })).toBeUndefined();
    const ambiguous = catalog.describe({ kind: 'agent', name: 'researcher' });
    await expect(ambiguous).rejects.toThrow(AmbiguousEntityError);
    await expect(ambiguous).rejects.toThrow('agent "researcher" is ambiguous: use "team-a/researcher" or "team-b/researcher"');
  });
});
