/**
 * Every shell block of the README and docs/ marked runnable (`<!-- runnable -->`
 * on the line before its fence) is run here, as written but for the
 * placeholders below, and must exit 0; a full-line `# ...` comment in such a
 * block is the output the doc shows for the commands above it (`…` stands for
 * anything, a leading HTTP status is not printed by curl), and must appear in
 * what they printed. Blocks that cannot run here (docker, a real model key, a
 * run paused for a person) stay unmarked; the counts of both are printed.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { Engine } from '@cairn/engine';
import { createRegistry } from '@cairn/research-team';
import { hasTestRedis, REPO_ROOT, testRedisUrl } from '@cairn/services';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProducer, type CairnProducer } from '../../apps/producer/src/start-producer.js';
import { openTestStore, type TestStore } from '../helpers/test-store.js';
import { shellBlocks, type ShellBlock } from './shell-blocks.js';

const exec = promisify(execFile);

process.env.RESEARCH_TOOL_DELAY_MS = '0';
process.env.RESEARCH_MODEL_LATENCY_MS = '0';

// Where the blocks run and write their files: a folder of its own inside the repository, so `npx`
// finds the repository's bins and `npm run` its scripts, under node_modules/ so that neither git nor
// prettier sees what the blocks write there.
const cacheDir = join(REPO_ROOT, 'node_modules', '.cache');
mkdirSync(cacheDir, { recursive: true });
const dir = mkdtempSync(join(cacheDir, 'cairn-doc-commands-'));
// curl exits 0 on a 4xx or 5xx answer; with this `.curlrc` (curl reads `$CURL_HOME/.curlrc`) it
// exits 22 and prints the body, so a documented call the API refuses fails the block.
writeFileSync(join(dir, '.curlrc'), '--fail-with-body\n');
let t: TestStore;
let producer: CairnProducer;
/** A finished research-team run in the test store: what `run_2f6c…`, `<run_id>` and `$RUN` name in the docs. */
let finishedRunId: string;

beforeAll(async () => {
  t = await openTestStore();
  const registry = createRegistry({ scriptedLatencyMs: 0 });
  const engine = new Engine({ store: t.store, registry });
  const run = await engine.createRun({
    entity: { kind: 'team', name: 'research-team' },
    input: "Research the topic 'runnable docs'.",
    checkpoint: 'tool-batch',
  });
  await engine.execute(run.runId, { reason: 'run' });
  finishedRunId = run.runId;
  // The producer the docs' curls call on localhost:3000, on the test database; no worker, so runs stay PENDING.
  producer = await startProducer({
    databaseUrl: t.database.url,
    redisUrl: hasTestRedis() ? testRedisUrl() : undefined,
    queueName: `test-${randomUUID()}`,
    migrate: false,
    port: 0,
    registry,
    logLevel: 'silent',
    env: {},
  });
});

afterAll(async () => {
  await producer?.close();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The docs' placeholders, filled with what exists here. */
function filled(body: string): string {
  return body
    .replaceAll('localhost:3000', producer.url.replace(/^http:\/\//, ''))
    .replaceAll('run_2f6c…', finishedRunId)
    .replaceAll('<run_id>', finishedRunId)
    .replace(/(?<![\w/.])run\.json\b/g, join(dir, 'run.json'));
}

/** The output a block shows: its full-line comments, as patterns (`…` is anything). */
function shownOutput(block: ShellBlock): { shown: string; pattern: RegExp }[] {
  return block.body
    .split('\n')
    .filter((line) => line.startsWith('# '))
    .map((line) => {
      const shown = line.slice(2).replace(/^\d{3} /, '');
      const escaped = shown
        .split('…')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*?');
      return { shown, pattern: new RegExp(escaped) };
    });
}

const blocks = shellBlocks();
const runnable = blocks.filter((b) => b.runnable);

it('marks at least five shell blocks of the docs runnable, and names the others', () => {
  console.log(
    `doc shell blocks: ${runnable.length} runnable and run here, ${blocks.length - runnable.length} not (docker, a model key, a person's decision): ${blocks
      .filter((b) => !b.runnable)
      .map((b) => `${b.file}:${b.line}`)
      .join(', ')}`,
  );
  expect(runnable.length).toBeGreaterThanOrEqual(5);
});

// One case per block, in the docs' order (a later block may use what an earlier one wrote), each
// with the suite's test timeout to itself: a block starts Node processes (npm run, tsx), and one
// took over 30 s with two suites at once.
it.each(runnable.map((block) => [`${block.file}:${block.line}`, block] as const))(
  'runs the shell block at %s: it exits 0 and prints the output its doc shows',
  async (where, block) => {
    const script = filled(block.body);
    let stdout: string;
    try {
      ({ stdout } = await exec('bash', ['-e', '-o', 'pipefail', '-c', script], {
        cwd: dir,
        env: {
          ...process.env,
          DATABASE_URL: t.database.url,
          CAIRN_REGISTRY: undefined,
          CURL_HOME: dir,
          // `$RUN` in the docs: the run to fork.
          RUN: finishedRunId,
        },
      }));
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      throw new Error(
        `${where} exited ${failed.code}: ${failed.stdout.trim()} ${failed.stderr.trim().split('\n').at(-1)}`,
      );
    }
    const missing = shownOutput(block).filter(({ pattern }) => !pattern.test(stdout));
    expect(
      missing.map(({ shown }) => shown),
      `${where} printed ${stdout}`,
    ).toEqual([]);
  },
);
