/**
 * Cairn's `/mcp` driven by a published MCP client: the MCP Inspector's command-line mode
 * (`@modelcontextprotocol/inspector-cli` from npm, the `--cli` mode of `@modelcontextprotocol/inspector`),
 * a process of its own over Streamable HTTP with a tenant's key in a header, against a producer
 * process (`npm run producer`, `CAIRN_MCP_WAIT_MS` set) and a worker serving the research team
 * (docs/mcp.md).
 */
import { execFile } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FLEET_BACKEND, startFleet, type Fleet, type SpawnedProducer } from '../fleet/fleet.js';

const INSPECTOR = fileURLToPath(import.meta.resolve('@modelcontextprotocol/inspector-cli'));
const ACME = 'acme-key';
const GLOBEX = 'globex-key';
/** The producer's bound on a start tool's wait: a research run (its tools take 2 s each) outlasts it. */
const WAIT_MS = 500;
/**
 * The case starts six inspector processes (a Node process each) and waits for a research run to
 * end; every wait inside it is for an answer or a status, and this bounds them together on a loaded
 * machine (the suite's ceiling).
 */
const CASE_TIMEOUT_MS = 120_000;

let fleet: Fleet;
let producer: SpawnedProducer;
beforeAll(async () => {
  fleet = await startFleet({ backend: FLEET_BACKEND, toolDelayMs: 2000 });
  await fleet.spawnWorker('mcp-worker');
  producer = await fleet.spawnProducer('mcp-producer', {
    env: {
      CAIRN_API_KEYS: `admin-key,acme:${ACME},globex:${GLOBEX}`,
      CAIRN_MCP_WAIT_MS: String(WAIT_MS),
    },
  });
});
afterAll(async () => {
  await fleet?.stop();
});

/** Runs the inspector's CLI mode against `/mcp` with `key`; answers the JSON it printed. */
async function inspect(key: string, ...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      INSPECTOR,
      '--cli',
      `${producer.baseUrl}/mcp`,
      '--transport',
      'http',
      '--header',
      `Authorization: Bearer ${key}`,
    ].concat(args),
    // Its CLI looks for its package.json relative to the working directory (then imports it relative
    // to its module): from its own build directory it finds it.
    { timeout: 30_000, cwd: dirname(INSPECTOR) },
  );
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** The JSON text of a `tools/call` answer the inspector printed. */
function toolAnswer(printed: Record<string, unknown>) {
  const [block] = printed.content as { type: string; text: string }[];
  return { isError: printed.isError === true, text: block!.text };
}

it(
  'lists the start tools, starts a run under the key tenant that outlasts the bound, and a tenant key cannot see another tenant run',
  async () => {
    const listed = await inspect(ACME, '--method', 'tools/list');
    const tools = listed.tools as { name: string; inputSchema: { properties: object } }[];
    expect(tools.map((t) => t.name).sort()).toEqual([
      'decide_actions',
      'get_run',
      'list_pending_actions',
      'start_agent_researcher',
      'start_team_research-team',
    ]);
    expect(
      Object.keys(tools.find((t) => t.name === 'start_agent_researcher')!.inputSchema.properties),
    ).toEqual(expect.arrayContaining(['input', 'idempotency_key', 'wait_ms']));

    // The run takes seconds: the start answers at the bound with its run id and page.
    const call = ['--method', 'tools/call', '--tool-name'];
    const started = toolAnswer(
      await inspect(ACME, ...call, 'start_agent_researcher', '--tool-arg', 'input=cairns'),
    );
    expect(started.isError).toBe(false);
    const answer = JSON.parse(started.text) as Record<string, string>;
    const runId = answer.run_id!;
    expect(['PENDING', 'RUNNING']).toContain(answer.status);
    expect(answer.page_url).toBe(`${producer.baseUrl}/ui/runs/${runId}`);
    expect(await fleet.client.runOwner(runId)).toEqual({ tenantId: 'acme' });
    // --tool-arg values are read as JSON when they parse: wait_ms=501 is a number, past the bound.
    const tooLong = toolAnswer(
      await inspect(
        ACME,
        ...call,
        'start_agent_researcher',
        '--tool-arg',
        'input=x',
        'wait_ms=501',
      ),
    );
    expect(tooLong).toEqual({ isError: true, text: expect.stringContaining('wait_ms') });

    const foreign = toolAnswer(
      await inspect(GLOBEX, ...call, 'get_run', '--tool-arg', `run_id=${runId}`),
    );
    expect(foreign).toEqual({
      isError: true,
      text: expect.stringContaining(`run ${runId} not found`),
    });
    const foreignPending = toolAnswer(
      await inspect(GLOBEX, ...call, 'list_pending_actions', '--tool-arg', `run_id=${runId}`),
    );
    expect(foreignPending.isError).toBe(true);

    // The worker finishes it; the key's tenant reads its answer.
    const done = await fleet.client.waitForRun(runId, { timeoutMs: 60_000 });
    expect(done.status).toBe('COMPLETED');
    const own = toolAnswer(
      await inspect(ACME, ...call, 'get_run', '--tool-arg', `run_id=${runId}`),
    );
    expect(JSON.parse(own.text)).toMatchObject({
      run_id: runId,
      status: 'COMPLETED',
      content: done.content,
    });
  },
  CASE_TIMEOUT_MS,
);
