import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRegistry as opsRegistry } from '@cairn/ops-agent';
import { createRegistry as researchRegistry } from '@cairn/research-team';
import { readRunFile, replayRun } from '@cairn/engine/testing';
import { describe, expect, it } from 'vitest';

// docs/forks-and-replay.md's regression suite, for real: every run file kept in tests/fixtures/runs (exported by
// `npm run replay -- --export`) replays clean on the examples' current code, with no database.

const DIR = fileURLToPath(new URL('../fixtures/runs/', import.meta.url));
const REGISTRIES = [researchRegistry(), opsRegistry()];

describe('stored run files', () => {
  it.each(readdirSync(DIR).filter((file) => file.endsWith('.json')))(
    '%s replays clean',
    async (file) => {
      const run = await readRunFile(DIR + file);
      const registry = REGISTRIES.find((r) => r.has(run.run.entity));
      expect(registry, `no example serves ${run.run.entity.name}`).toBeDefined();
      const result = await replayRun(registry!, run);
      expect(result).toMatchObject({ ok: true });
      expect(result.turns).toBeGreaterThan(0);
    },
  );
});
