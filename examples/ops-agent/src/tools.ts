import { setTimeout as sleep } from 'node:timers/promises';
import { tool, type ApprovalOptions } from '@cairn/engine';
import { z } from 'zod';
import { recordOpsExecution } from './tool-ledger.js';

/** Reads a service's health: needs nobody. */
export const checkStatus = tool({
  name: 'check_status',
  description: 'Reads the health of a service',
  parameters: z.object({ service: z.string().describe('Service name') }),
  execute: ({ service }) => `${service}: degraded (p99 latency 4.2 s)`,
});

/** Options of {@link restartService}. */
export interface RestartServiceOptions {
  approval?: ApprovalOptions;
  /** Keeps the call open this long after the restart happened (for crash tests). @defaultValue 0 */
  holdAfterMs?: number;
}

/** Restarts a service: a person approves (or edits, or rejects) every call first. */
export function restartService(options: RestartServiceOptions = {}) {
  return tool({
    name: 'restart_service',
    description: 'Restarts a service (a person approves every restart)',
    parameters: z.object({
      service: z.string().describe('Service name'),
      reason: z.string().optional(),
    }),
    needsApproval: true,
    ...(options.approval && { approval: options.approval }),
    execute: async (args, ctx) => {
      await recordOpsExecution('restart_service', ctx.idempotencyKey, args);
      if (options.holdAfterMs) await sleep(options.holdAfterMs, undefined, { signal: ctx.signal });
      return `restarted ${args.service}`;
    },
  });
}

/** Asks the on-call operator: the answer is posted as the call's result. */
export const askOperator = tool({
  name: 'ask_operator',
  description: 'Asks the on-call operator a question; their answer is the result',
  parameters: z.object({ question: z.string() }),
  external: true,
});
