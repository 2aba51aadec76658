/**
 * MCP tools on a fleet (docs/mcp.md): worker processes whose agent takes its tools from an MCP
 * server over stdio, one server process per worker; the worker holding a run is SIGKILLed between
 * two MCP calls, and another worker resumes the run.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { closeMcpClients } from '@cairn/engine/mcp';
import { afterAll, expect, it } from 'vitest';
import { FLEET_BACKEND, holderOf, startFleet, waitFor, type Fleet } from '../fleet/fleet.js';
import { MCP_STEPS } from './mcp-fleet-registry.js';

const REGISTRY = fileURLToPath(new URL('./mcp-fleet-registry.ts', import.meta.url));
const KB_SERVER = fileURLToPath(new URL('./stdio-server.ts', import.meta.url));

let fleet: Fleet | undefined;
afterAll(async () => {
  await closeMcpClients();
  await fleet?.stop();
});

/** Two workers start, the run waits for a takeover after the kill: processes on a loaded machine. */
const TEST_TIMEOUT_MS = 120_000;

it(
  'a worker SIGKILLed between MCP calls: another resumes the run, and no call committed before the kill is sent again',
  async () => {
    // The test's own copy of the registry (the client's) spawns a server too: it records nothing.
    process.env.MCP_KB_SERVER = KB_SERVER;
    fleet = await startFleet({ backend: FLEET_BACKEND, registryModule: REGISTRY });
    const ledger = join(fleet.dir, 'mcp-ledger.tsv');
    // The first execution (epoch 1) stalls on its second lookup: the kill always finds the run there.
    const env = { MCP_KB_SERVER: KB_SERVER, MCP_LEDGER: ledger, MCP_STALL_EPOCH: '1' };
    await Promise.all([fleet.spawnWorker('mcp-a', env), fleet.spawnWorker('mcp-b', env)]);
    const { client } = fleet;
    const { runId } = await client.enqueueRun({
      entity: { kind: 'agent', name: 'mcp-researcher' },
      input: 'cairns',
    });

    // The kill point: the first lookup committed, the second sent (the server's ledger has it).
    const sent = () =>
      existsSync(ledger)
        ? readFileSync(ledger, 'utf8')
            .trim()
            .split('\n')
            .map((line) => line.split('\t'))
        : [];
    let holder: string | undefined;
    await waitFor(
      async () => {
        const view = await client.getRun(runId);
        holder = holderOf(view);
        return holder !== undefined && view!.tools.length === 1 && sent().length === 2;
      },
      60_000,
      'the first lookup committed and the second sent',
    );
    expect((await client.getRun(runId))!.tools.map((t) => t.status)).toEqual(['completed']);
    const victim = fleet.workers.find((w) => w.id === holder)!;
    victim.kill('SIGKILL');
    await victim.exited;

    const done = await client.waitForRun(runId, { timeoutMs: 90_000 });
    expect(done.status).toBe('COMPLETED');
    const view = (await client.getRun(runId))!;
    expect(view.attempts.map((a) => a.reason)).toEqual(['run', 'recovered']);
    expect(view.tools.map((t) => [t.name, t.status])).toEqual(
      Array.from({ length: MCP_STEPS }, () => ['kb_lookup', 'completed']),
    );
    expect(view.content).toBe(
      Array.from({ length: MCP_STEPS }, (_, i) => `kb: cairns ${i + 1} are stacked stones`).join(
        ' | ',
      ),
    );

    // What the servers received: the committed first call once (epoch 1). The call in flight at
    // the kill was never committed: the recovered execution asked the model again, which called
    // afresh (a new call id, so a new idempotency key), and went on under epoch 2.
    const [first, second, third] = view.tools.map((t) => t.idempotency_key);
    const [inFlight] = sent()[1]!;
    expect(sent()).toEqual([
      [first, '1'],
      [inFlight, '1'],
      [second, '2'],
      [third, '2'],
    ]);
    expect([first, second, third]).not.toContain(inFlight);
  },
  TEST_TIMEOUT_MS,
);
