import type { ExpectStatic } from 'vitest';
import { epochOfResult, type ToolExecution } from './capacity-registry.js';

/** A committed tool call as a run view shows it. */
interface CommittedTool {
  name: string;
  idempotency_key: string;
  result: string | null;
}

/**
 * Each committed tool result names the execution that produced it
 * (`[epoch N]`): that execution ran the call exactly once, and none after it
 * did (a call checkpointed as completed is never sent again).
 */
export function expectEachCommittedToolRanOnce(
  expect: ExpectStatic,
  committed: readonly CommittedTool[],
  ledger: readonly ToolExecution[],
): void {
  for (const t of committed) {
    const epoch = epochOfResult(t.result)!;
    const executions = ledger.filter((e) => e.idempotencyKey === t.idempotency_key);
    const label = `${t.name} ${t.idempotency_key}`;
    expect(
      executions.filter((e) => e.epoch === epoch),
      label,
    ).toHaveLength(1);
    expect(
      executions.filter((e) => e.epoch > epoch),
      label,
    ).toHaveLength(0);
  }
}
