import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { findRedisServer, REDIS_SERVER, REPO_ROOT, requires } from '@cairn/services';
import { describe, it } from 'vitest';

const run = promisify(execFile);

/** Each story's ceiling; the demo is stopped 10 s before it, so that its output and its cleanup are not lost. */
const STORY_TIMEOUT_MS = 120_000;

/** `npm run demo -- <args>` without npm, as a user with no DATABASE_URL and no REDIS_URL runs it; its stdout. */
async function demo(args: string[]): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', '--conditions=source', 'scripts/demo.ts', ...args],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: '', REDIS_URL: '' },
      timeout: STORY_TIMEOUT_MS - 10_000,
    },
  );
  return stdout;
}

// Each demo starts its own Postgres, Redis and three processes. The stories run one after the other:
// side by side, nine processes started at once on a loaded machine, and each story took over 100 s.
describe('npm run demo', () => {
  for (const queue of ['postgres', 'redis'] as const) {
    // The demo starts its own Redis from the machine's binary, so the Redis run needs one.
    const needs = queue === 'redis' ? requires(REDIS_SERVER, findRedisServer() !== undefined) : {};
    it(
      `tells the crash-recovery story on the ${queue} queue backend and exits 0`,
      { ...needs, timeout: STORY_TIMEOUT_MS },
      async ({ expect }) => {
        const stdout = await demo(['--queue', queue]);
        expect(stdout).toContain(
          queue === 'postgres' ? 'BullMQ on its PostgreSQL backend' : 'BullMQ on Redis',
        );
        expect(stdout).toMatch(/>>> SIGKILL demo-worker-\d/);
        expect(stdout).toMatch(/claimed by demo-worker-\d \(attempt 2, reason recovered\)/);
        expect(stdout).toContain('Same run_id: true. Finished by');
        expect(stdout).toContain('after stalled-job detection: true');
        expect(stdout).toContain('- Detail for result-c: lorem ipsum dolor sit amet');
      },
    );
  }

  it(
    'tells the approval story (--approval): paused, a worker SIGKILLed, approved over HTTP, resumed elsewhere, restarted once',
    { timeout: STORY_TIMEOUT_MS },
    async ({ expect }) => {
      const stdout = await demo(['--approval', '--queue', 'postgres']);
      expect(stdout).toContain('status: PAUSED');
      expect(stdout).toMatch(/>>> SIGKILL demo-worker-\d .*; the run is still PAUSED/);
      expect(stdout).toMatch(
        /-> 200 \{"applied":\["act_[0-9a-f-]+"\],"already_decided":\[\],"pending":0/,
      );
      expect(stdout).toMatch(/attempt 2: demo-worker-\d \(continue\) -> completed/);
      expect(stdout).toContain('- restart_service: restarted api');
      expect(stdout).toContain('restart_service executions in the ledger: 1. Same run_id: true.');
    },
  );
});
