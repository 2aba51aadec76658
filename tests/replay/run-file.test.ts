import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createRegistry } from '@cairn/research-team';
import { REPO_ROOT } from '@cairn/services';
import { Engine, MAX_TOOL_CALLS_PER_TURN } from '@cairn/engine';
import { exportRun, readRunFile, replayRun, RunFileError } from '@cairn/engine/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

// A stored run exported as a file replays with no database, in process and through `npm run replay`.

process.env.RESEARCH_TOOL_DELAY_MS = '0';
process.env.RESEARCH_MODEL_LATENCY_MS = '0';

const exec = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'cairn-replay-'));
let t: TestStore;
let runId: string;
beforeAll(async () => {
  t = await openTestStore();
  const engine = new Engine({ store: t.store, registry: createRegistry({ scriptedLatencyMs: 0 }) });
  const run = await engine.createRun({
    entity: { kind: 'team', name: 'research-team' },
    input: "Research the topic 'run files'.",
    checkpoint: 'tool-batch',
  });
  await engine.execute(run.runId, { reason: 'run' });
  runId = run.runId;
});
afterAll(() => t.close());

/** `npm run replay -- ...args` as a child process: its exit code and output. */
async function replayCli(args: string[], env: Record<string, string | undefined> = {}) {
  try {
    const { stdout, stderr } = await exec(
      process.execPath,
      ['--import', 'tsx', '--conditions=source', 'scripts/replay.ts', ...args],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, DATABASE_URL: t.database.url, CAIRN_REGISTRY: undefined, ...env },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

function writeFile(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

describe('run files', () => {
  it('export, write, read back and replay with the database gone', async () => {
    const path = writeFile('run.json', JSON.stringify(await exportRun(t.store, runId)));
    const file = await readRunFile(path);
    expect(file).toMatchObject({
      schema: 'cairn.run-export',
      schema_version: 1,
      run: { run_id: runId, status: 'COMPLETED' },
      members: [{ parent_run_id: runId, entity: { name: 'research-team/researcher' } }],
    });
    // Nothing below reads the store: the file is all there is.
    expect(await replayRun(createRegistry(), file)).toEqual({ ok: true, turns: 7, toolCalls: 5 });
  });

  it('a file that is not JSON, or of another schema or schema_version, is refused by name', async () => {
    const good = await exportRun(t.store, runId);
    const cases: [string, string, RegExp][] = [
      ['not-json.json', 'replayed 7 turns', /not-json\.json: not JSON: /],
      [
        'v2.json',
        JSON.stringify({ ...good, schema_version: 2 }),
        /v2\.json: schema_version 2 is not supported: this Cairn reads version 1$/,
      ],
      [
        'other.json',
        JSON.stringify({ ...good, schema: 'cairn.run-view' }),
        /other\.json: not a run file: schema is "cairn.run-view", expected "cairn.run-export"$/,
      ],
      [
        'bad-message.json',
        JSON.stringify({ ...good, run: { ...good.run, messages: [{ role: 'robot' }] } }),
        /bad-message\.json: malformed run file: run\.messages\.0\.role: /,
      ],
    ];
    const turnOf = (calls: number) => ({
      ...good,
      run: {
        ...good.run,
        messages: [
          good.run.messages[0],
          {
            role: 'assistant',
            content: null,
            toolCalls: Array.from({ length: calls }, (_, i) => ({
              id: `call_${i}`,
              name: 'slow_search',
              arguments: '{}',
            })),
          },
        ],
      },
    });
    cases.push([
      'wide-turn.json',
      JSON.stringify(turnOf(MAX_TOOL_CALLS_PER_TURN + 1)),
      /wide-turn\.json: malformed run file: run\.messages\.1\.toolCalls: 1001 tool calls in one turn, more than MAX_TOOL_CALLS_PER_TURN \(1000\) allows$/,
    ]);
    // A turn at the cap is a run file like any other.
    await expect(
      readRunFile(writeFile('cap-turn.json', JSON.stringify(turnOf(MAX_TOOL_CALLS_PER_TURN)))),
    ).resolves.toMatchObject({ run: { run_id: runId } });
    for (const [name, content, message] of cases) {
      const read = readRunFile(writeFile(name, content));
      await expect(read).rejects.toThrow(RunFileError);
      await expect(read).rejects.toThrow(message);
    }
  });

  it('exporting a run the store does not have names it', async () => {
    await expect(exportRun(t.store, 'run_does_not_exist')).rejects.toThrow(
      'run run_does_not_exist not found',
    );
  });
});

describe('npm run replay', () => {
  it('replays a stored run (exit 0), exports it, and replays the file with no database', async () => {
    const out = join(dir, 'cli-run.json');
    const [replayed, exported] = await Promise.all([
      replayCli([runId]),
      replayCli(['--export', runId, '--out', out]),
    ]);
    expect(replayed).toMatchObject({ code: 0, stdout: 'replayed 7 turns, 5 tool calls: ok\n' });
    expect(exported).toMatchObject({ code: 0 });
    expect(exported.stdout).toContain(`wrote run ${runId} and 1 member run(s) to ${out}`);
    expect(await replayCli([out], { DATABASE_URL: undefined })).toMatchObject({
      code: 0,
      stdout: 'replayed 7 turns, 5 tool calls: ok\n',
    });
  });

  it("prints a file's names and values with their control characters escaped: no retitled terminal, no forged line", async () => {
    // A terminal title, an erased line, a carriage return and a forged result, then a C1 CSI and DEL.
    const hostile =
      '\u001b]0;pwned\u0007\u001b[2K\rreplayed 7 turns, 5 tool calls: ok\u009b2K\u007f';
    const shown = String.raw`\u001b]0;pwned\u0007\u001b[2K\rreplayed 7 turns, 5 tool calls: ok\u009b2K\u007f`;
    const good = await exportRun(t.store, runId);
    const member = good.members[0]!;
    const [input, turn, result, ...rest] = member.messages;
    if (turn?.role !== 'assistant' || result?.role !== 'tool') throw new Error('unexpected run');
    const tool = `slow_search${hostile}`;
    const renamed = {
      ...good,
      members: [
        {
          ...member,
          entity: { ...member.entity, name: `research-team/researcher${hostile}` },
          messages: [
            input!,
            { ...turn, toolCalls: turn.toolCalls!.map((call) => ({ ...call, name: tool })) },
            { ...result, name: tool },
            ...rest,
          ],
        },
      ],
    };
    const [diverged, refused] = await Promise.all([
      replayCli([writeFile('hostile.json', JSON.stringify(renamed))], { DATABASE_URL: undefined }),
      replayCli([writeFile('hostile-schema.json', JSON.stringify({ ...good, schema: hostile }))], {
        DATABASE_URL: undefined,
      }),
    ]);
    // Unicode's control characters: C0, DEL and C1 (each output is one line and its newline).
    const raw = /\p{Cc}/u;
    expect(diverged).toMatchObject({ code: 1, stderr: '' });
    expect(diverged.stdout.slice(0, -1)).not.toMatch(raw);
    expect(diverged.stdout).toBe(
      `member run ${member.run_id} (research-team/researcher${shown}) turn 1: tool "slow_search${shown}" no longer exists on agent "researcher"\n`,
    );
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr.slice(0, -1)).not.toMatch(raw);
    expect(refused.stderr).toMatch(
      /^replay: \S+hostile-schema\.json: not a run file: schema is "(.*)", expected "cairn\.run-export"\n$/,
    );
    expect(refused.stderr).toContain(`schema is "${shown}"`);
  });

  it('prints the first divergence against a changed registry (exit 1); bad usage or a bad file exits 2', async () => {
    const [changed, usage, bad, noDb] = await Promise.all([
      replayCli([runId], {
        CAIRN_REGISTRY: join(REPO_ROOT, 'tests/replay/changed-research-registry.ts'),
      }),
      replayCli([]),
      replayCli([writeFile('cli-bad.json', '{ nope')], { DATABASE_URL: undefined }),
      replayCli(['run_x'], { DATABASE_URL: undefined }),
    ]);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(
      /^member run \S+ \(research-team\/researcher\) turn 2: tool "slow_fetch_detail" args \{"item":"result-a"\} no longer valid: item: Invalid input: expected number, received string\n$/,
    );
    expect(usage).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('usage: npm run replay'),
    });
    expect(bad).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/cli-bad\.json: not JSON/),
    });
    expect(noDb).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('DATABASE_URL is not set'),
    });
  });
});
