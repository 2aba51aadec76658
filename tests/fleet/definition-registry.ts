/**
 * Definitions of one agent, `drafter`, as successive deploys would change
 * it; a worker loads the one `DEFINITION_VARIANT` names (`CAIRN_REGISTRY`):
 * - `v1`: the definition runs start on;
 * - `prompt`: v1 with changed instructions;
 * - `schema`: v1 whose tool takes one more (optional) parameter;
 * - `prompt-resume`: `prompt`, declaring `onDefinitionChange: 'resume'`.
 * `drafter` works in two slow steps (one tool batch each, so a worker can be
 * SIGKILLed after the first checkpoint), then answers; its scripted model
 * returns fresh tool-call ids, as a real model does.
 */
import { Agent, Registry, tool } from '@cairn/engine';
import { ScriptedModel, toolResults } from '@cairn/engine/testing';
import { recordExecution } from '@cairn/research-team';
import { z } from 'zod';

/** The variants a worker may load. */
export const DEFINITION_VARIANTS = ['v1', 'prompt', 'schema', 'prompt-resume'] as const;
/** One of {@link DEFINITION_VARIANTS}. */
export type DefinitionVariant = (typeof DEFINITION_VARIANTS)[number];

/** The entity every run of these scenarios names. */
export const DRAFTER = { kind: 'agent', name: 'drafter' } as const;

function draftStep(variant: DefinitionVariant) {
  const base = z.object({ part: z.number().int() });
  return tool({
    name: 'draft_step',
    description: 'Drafts one part, slowly',
    parameters: variant === 'schema' ? base.extend({ tone: z.string().optional() }) : base,
    execute: async ({ part }, ctx) => {
      // `DRAFT_LATER_STEP_MS`, when set, is how long the parts after the first take.
      const stepMs = process.env.DRAFT_STEP_MS ?? '1500';
      const ms = part > 1 ? (process.env.DRAFT_LATER_STEP_MS ?? stepMs) : stepMs;
      await new Promise((resolve) => setTimeout(resolve, Number(ms)));
      recordExecution('draft_step', ctx.idempotencyKey);
      return `part ${part} drafted`;
    },
  });
}

/** The registry of one variant. */
export function registryOf(variant: DefinitionVariant): Registry {
  const changedPrompt = variant === 'prompt' || variant === 'prompt-resume';
  const drafter = new Agent({
    name: 'drafter',
    instructions: changedPrompt ? 'Draft in two parts, formally.' : 'Draft in two parts.',
    model: new ScriptedModel({
      toolCallIds: 'fresh',
      latencyMs: 50,
      decide: ({ messages }) => {
        const done = toolResults(messages, 'draft_step').length;
        return done < 2
          ? { toolCalls: [{ name: 'draft_step', arguments: { part: done + 1 } }] }
          : { text: `draft of ${done} parts` };
      },
    }),
    tools: [draftStep(variant)],
    checkpoint: 'tool-batch',
    ...(variant === 'prompt-resume' && { onDefinitionChange: 'resume' as const }),
  });
  return new Registry({ agents: [drafter] });
}

/** @public The registry a worker loads: the variant `DEFINITION_VARIANT` names (default `v1`). */
export function createRegistry(): Registry {
  const variant = (process.env.DEFINITION_VARIANT ?? 'v1') as DefinitionVariant;
  if (!DEFINITION_VARIANTS.includes(variant))
    throw new Error(`DEFINITION_VARIANT must be one of ${DEFINITION_VARIANTS.join(', ')}`);
  return registryOf(variant);
}
