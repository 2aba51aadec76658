import { expect } from 'vitest';
import type { RunView } from '@cairn/store';

/** Asserts that the team's first member run ended in ERROR at the team's deadline instant, its error naming the member. */
export function expectMemberStoppedAtTeamDeadline(team: RunView): void {
  const member = team.member_runs[0]!;
  expect(member).toMatchObject({
    status: 'ERROR',
    // What was left of the team's deadline: the same instant.
    deadline_at: team.deadline_at,
    error: {
      name: 'DeadlineExceededError',
      message: expect.stringContaining(`run ${member.run_id} passed its deadline`),
    },
  });
}
