import {
  Agent,
  Registry,
  Team,
  APPROVAL_TIMEOUT_OUTCOMES,
  type ApprovalOptions,
  type ApprovalTimeoutOutcome,
  type Model,
} from '@cairn/engine';
import { ScriptedModel } from '@cairn/engine/testing';
import { opsScript, opsTeamScript } from './scripts.js';
import { askOperator, checkStatus, restartService } from './tools.js';

/** Options of {@link createRegistry}. */
export interface OpsAgentOptions {
  /** A model for the agent and the team; the scripted flow (with fresh tool-call ids, as real models give) when omitted. */
  model?: Model;
}

/** `restart_service` expiry from the environment: `OPS_APPROVAL_TIMEOUT_MS`, `OPS_ON_TIMEOUT`. */
function approvalFromEnv(): ApprovalOptions | undefined {
  const timeoutMs = Number(process.env.OPS_APPROVAL_TIMEOUT_MS);
  if (!process.env.OPS_APPROVAL_TIMEOUT_MS || !Number.isInteger(timeoutMs) || timeoutMs <= 0)
    return undefined;
  const onTimeout = process.env.OPS_ON_TIMEOUT as ApprovalTimeoutOutcome | undefined;
  return {
    timeoutMs,
    ...(onTimeout && APPROVAL_TIMEOUT_OUTCOMES.includes(onTimeout) && { onTimeout }),
  };
}

/** `ops-agent` (check_status; restart_service needs approval; ask_operator is external) and `ops-team`, which delegates to it. */
export function createRegistry(options: OpsAgentOptions = {}): Registry {
  // Fresh tool-call ids on every request, as a real model returns them: a resumed run never relies on ids repeating.
  const scripted = (name: string, decide: typeof opsScript) =>
    new ScriptedModel({ name, decide, latencyMs: 50, toolCallIds: 'fresh' });
  const opsAgent = new Agent({
    name: 'ops-agent',
    role: 'Keeps services healthy: checks them, restarts them with approval, asks the operator when unsure.',
    model: options.model ?? scripted('scripted:ops-agent', opsScript),
    tools: [
      checkStatus,
      restartService({
        approval: approvalFromEnv(),
        holdAfterMs: Number(process.env.OPS_HOLD_AFTER_RESTART_MS ?? 0),
      }),
      askOperator,
    ],
    checkpoint: 'tool-batch',
    instructions:
      'Check a service before restarting it. Ask the operator when the request is unclear.',
  });
  const opsTeam = new Team({
    name: 'ops-team',
    model: options.model ?? scripted('scripted:ops-team', opsTeamScript),
    members: [opsAgent],
    checkpoint: 'tool-batch',
    instructions: 'Hand operations work to the ops agent and report what it did.',
  });
  return new Registry({ teams: [opsTeam], agents: [opsAgent] });
}
