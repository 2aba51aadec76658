/**
 * A published third-party MCP server on a fleet (docs/mcp.md): two workers whose agent writes
 * through `@modelcontextprotocol/server-filesystem` (from npm) over stdio; the worker holding the
 * run is SIGKILLed between two MCP calls, and the other worker resumes the run without sending the
 * completed call again: the file the server wrote holds each line once.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { closeMcpClients } from '@cairn/engine/mcp';
import { afterAll, expect, it } from 'vitest';
import { FLEET_BACKEND, holderOf, startFleet, waitFor, type Fleet } from '../fleet/fleet.js';
import { JOURNAL, JOURNAL_END, SCRIBE_STEPS } from './filesystem-fleet-registry.js';

const REGISTRY = fileURLToPath(new URL('./filesystem-fleet-registry.ts', import.meta.url));

/** The one directory the filesystem server may use (the workers' and the client's). */
const dir = mkdtempSync(join(tmpdir(), 'cairn-mcp-fs-'));

let fleet: Fleet | undefined;
afterAll(async () => {
  await closeMcpClients();
  await fleet?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Two workers start, the run waits for a takeover after the kill: processes on a loaded machine. */
const TEST_TIMEOUT_MS = 120_000;

it(
  'server-filesystem over stdio: a worker SIGKILLed between two calls, another resumes the run, and the completed call is not sent again',
  async () => {
    // The test's own copy of the registry (the client's) spawns a server too, allowed the same directory.
    process.env.MCP_FS_DIR = dir;
    fleet = await startFleet({ backend: FLEET_BACKEND, registryModule: REGISTRY });
    const journal = join(dir, JOURNAL);
    writeFileSync(journal, `${JOURNAL_END}\n`);
    const marker = join(fleet.dir, 'stalled');
    const env = { MCP_FS_DIR: dir, MCP_FS_STALL_MARKER: marker };
    await Promise.all([fleet.spawnWorker('fs-a', env), fleet.spawnWorker('fs-b', env)]);
    const { client } = fleet;
    const { runId } = await client.enqueueRun({
      entity: { kind: 'agent', name: 'fs-scribe' },
      input: 'cairn',
    });

    // The kill point: the first edit committed, the model asked for the second (and stalled there).
    let holder: string | undefined;
    await waitFor(
      async () => {
        const view = await client.getRun(runId);
        holder = holderOf(view);
        return holder !== undefined && view!.tools.length === 1 && existsSync(marker);
      },
      60_000,
      'the first edit committed and the model asked for the second',
    );
    expect((await client.getRun(runId))!.tools.map((t) => [t.name, t.status])).toEqual([
      ['fs_edit_file', 'completed'],
    ]);
    expect(readFileSync(journal, 'utf8')).toBe(`cairn 1\n${JOURNAL_END}\n`);
    const victim = fleet.workers.find((w) => w.id === holder)!;
    victim.kill('SIGKILL');
    await victim.exited;

    const done = await client.waitForRun(runId, { timeoutMs: 90_000 });
    expect(done.status).toBe('COMPLETED');
    const view = (await client.getRun(runId))!;
    expect(view.attempts.map((a) => a.reason)).toEqual(['run', 'recovered']);
    expect(view.attempts[1]!.worker_id).not.toBe(victim.id);
    expect(view.tools.map((t) => [t.name, t.status])).toEqual([
      ...Array.from({ length: SCRIBE_STEPS }, () => ['fs_edit_file', 'completed']),
      ['fs_read_text_file', 'completed'],
    ]);
    // Each line once: the edit committed before the kill was not sent again by the new worker.
    const lines = Array.from({ length: SCRIBE_STEPS }, (_, i) => `cairn ${i + 1}`);
    const written = [...lines, JOURNAL_END, ''].join('\n');
    expect(readFileSync(journal, 'utf8')).toBe(written);
    expect(view.content).toBe(written);
  },
  TEST_TIMEOUT_MS,
);
