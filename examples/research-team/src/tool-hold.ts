import { existsSync } from 'node:fs';

/** How often a held tool looks whether its hold was lifted. */
const HOLD_POLL_MS = 25;

/**
 * Waits while the file named by `RESEARCH_TOOL_HOLD_FILE` exists (at once
 * when the variable is unset). The detail fetch calls it, so a test across
 * processes can hold a researcher between its search and its detail (its
 * answer still ahead) until the moment it needs, as the ledger lets it count
 * executions. Rejects with the signal's reason when the call is aborted while
 * held.
 */
export async function waitWhileHeld(signal: AbortSignal): Promise<void> {
  const file = process.env.RESEARCH_TOOL_HOLD_FILE;
  while (file && existsSync(file)) {
    signal.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, HOLD_POLL_MS));
  }
}
