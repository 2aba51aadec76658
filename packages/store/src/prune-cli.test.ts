import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { REPO_ROOT } from '@cairn/services';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { newRun, useStoreTestContext } from './test-support/store-test-context.js';

const run = promisify(execFile);
const ctx = useStoreTestContext();

function prune(args: string[], env: Record<string, string | undefined> = {}) {
  return run(
    process.execPath,
    ['--import', 'tsx', '--conditions=source', 'packages/store/src/bin/prune.ts', ...args],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: ctx.url, CAIRN_RETAIN_DAYS: undefined, ...env },
    },
  );
}

describe('npm run prune', () => {
  it('--older-than 7d deletes the finished runs older than a week, and 0d every finished one; unfinished runs stay', async () => {
    const ids: Record<string, string> = {};
    for (const [name, status, daysAgo] of [
      ['old', 'COMPLETED', 10],
      ['week', 'CANCELLED', 3],
      ['live', 'RUNNING', 10],
    ] as const) {
      const created = await ctx.store.createRun(newRun());
      ids[name] = created.runId;
      await sql`update runs set status = ${status}, updated_at = now() - make_interval(days => ${daysAgo}) where run_id = ${created.runId}`.execute(
        ctx.db,
      );
    }
    const weekly = await prune(['--older-than', '7d']);
    expect(weekly.stdout).toContain('pruned 1 finished run(s)');
    expect(await ctx.store.getRun(ids.old!)).toBeUndefined();
    expect(await ctx.store.getRun(ids.week!)).toBeDefined();

    const all = await prune(['--older-than', '0d']);
    expect(all.stdout).toContain('pruned 1 finished run(s)');
    expect(await ctx.store.getRun(ids.week!)).toBeUndefined();
    expect(await ctx.store.getRun(ids.live!)).toBeDefined();
  });

  it('names the bad value and exits 1; CAIRN_RETAIN_DAYS=0 without --older-than keeps everything', async () => {
    await expect(prune(['--older-than', 'a week'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('--older-than'),
    });
    await expect(prune([], { CAIRN_RETAIN_DAYS: 'many' })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('CAIRN_RETAIN_DAYS'),
    });
    const kept = await prune([], { CAIRN_RETAIN_DAYS: '0' });
    expect(kept.stdout).toContain('keeps everything');
  });
});
