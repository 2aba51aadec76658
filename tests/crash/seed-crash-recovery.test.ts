import { testDatabase, type TestDatabase } from '@cairn/services';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSeedCrashRecovery } from '../../scripts/lib/seed-crash-recovery.js';

let database: TestDatabase;
beforeEach(async () => {
  database = await testDatabase();
  process.env.RESEARCH_TOOL_DELAY_MS = '300';
  process.env.RESEARCH_MODEL_LATENCY_MS = '600';
});
afterEach(() => database.drop());

function executionsByKey(ledger: [string, string][]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [, key] of ledger) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}

describe('the seed flow: SIGKILL a worker mid-run, continue from the last checkpoint', () => {
  it('killed after the team checkpoint: resumes in place and finishes without redoing the research', async () => {
    const { crashed, resumed, ledger } = await runSeedCrashRecovery({
      databaseUrl: database.url,
      killPoint: 'team',
    });
    expect(crashed.status).toBe('RUNNING');
    expect(crashed.last_checkpoint_at_message_index).toBe(3);
    expect(crashed.tools).toHaveLength(1);

    expect(resumed.run_id).toBe(crashed.run_id);
    expect(resumed.status).toBe('COMPLETED');
    expect(resumed.attempts.map((a) => a.reason)).toEqual(['run', 'continue']);
    expect(resumed.content).toContain('Detail for result-c: lorem ipsum dolor sit amet');
    expect(resumed.member_runs).toHaveLength(1);
    expect(ledger.filter(([tool]) => tool === 'slow_fetch_detail')).toHaveLength(3);
    expect(ledger.filter(([tool]) => tool === 'slow_search')).toHaveLength(1);
  });

  it('killed inside the member run: the member is continued, finished fetches are not fetched again', async () => {
    const { crashed, resumed, ledger } = await runSeedCrashRecovery({
      databaseUrl: database.url,
      killPoint: 'member',
    });
    const crashedMember = crashed.member_runs[0]!;
    expect(crashed.status).toBe('RUNNING');
    expect(crashedMember.status).toBe('RUNNING');
    const fetchedBeforeCrash = crashedMember.tools.filter((t) => t.name === 'slow_fetch_detail');
    expect(fetchedBeforeCrash.length).toBeGreaterThanOrEqual(1);

    expect(resumed.status).toBe('COMPLETED');
    expect(resumed.attempts.map((a) => a.reason)).toEqual(['run', 'continue']);
    expect(resumed.member_runs).toHaveLength(1);
    const member = resumed.member_runs[0]!;
    expect(member.run_id).toBe(crashedMember.run_id);
    expect(member.attempts.map((a) => a.reason)).toEqual(['run', 'continue']);
    expect(member.tools.map((t) => t.name)).toEqual([
      'slow_search',
      'slow_fetch_detail',
      'slow_fetch_detail',
      'slow_fetch_detail',
    ]);
    for (const finished of fetchedBeforeCrash) {
      expect(executionsByKey(ledger).get(finished.idempotency_key)).toBe(1);
    }
    expect([...executionsByKey(ledger).values()].every((n) => n === 1)).toBe(true);
    expect(resumed.content).toContain('Detail for result-c');
  });
});
