/**
 * The ops example's agent and team as two successive deploys define them; a
 * worker loads the one `OPS_DEFINITION` names (`CAIRN_REGISTRY`): `v1` (the
 * definition runs start on) or `v2` (changed instructions). Same tools
 * (`restart_service` needs approval and writes the Postgres ledger), same
 * scripted flow with fresh tool-call ids, as a real model returns them.
 */
import { Agent, Registry, Team } from '@cairn/engine';
import {
  askOperator,
  checkStatus,
  opsScript,
  opsTeamScript,
  restartService,
} from '@cairn/ops-agent';
import { ScriptedModel } from '@cairn/engine/testing';

/** The definitions a worker may load. */
export const OPS_DEFINITIONS = ['v1', 'v2'] as const;
/** One of {@link OPS_DEFINITIONS}. */
export type OpsDefinition = (typeof OPS_DEFINITIONS)[number];

/** The registry of one definition. */
export function opsRegistryOf(definition: OpsDefinition): Registry {
  const scripted = (name: string, decide: typeof opsScript) =>
    new ScriptedModel({ name, decide, latencyMs: 50, toolCallIds: 'fresh' });
  const opsAgent = new Agent({
    name: 'ops-agent',
    model: scripted('scripted:ops-agent', opsScript),
    tools: [checkStatus, restartService(), askOperator],
    checkpoint: 'tool-batch',
    instructions:
      definition === 'v1'
        ? 'Check a service before restarting it.'
        : 'Check a service twice before restarting it.',
  });
  const opsTeam = new Team({
    name: 'ops-team',
    model: scripted('scripted:ops-team', opsTeamScript),
    members: [opsAgent],
    checkpoint: 'tool-batch',
    instructions: 'Hand operations work to the ops agent and report what it did.',
  });
  return new Registry({ teams: [opsTeam], agents: [opsAgent] });
}

/** @public The registry a worker loads: the definition `OPS_DEFINITION` names (default `v1`). */
export function createRegistry(): Registry {
  const definition = (process.env.OPS_DEFINITION ?? 'v1') as OpsDefinition;
  if (!OPS_DEFINITIONS.includes(definition))
    throw new Error(`OPS_DEFINITION must be one of ${OPS_DEFINITIONS.join(', ')}`);
  return opsRegistryOf(definition);
}
