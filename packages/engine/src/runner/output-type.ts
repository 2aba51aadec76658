import { z } from 'zod';

/** What checking a final answer against an entity's `outputType` gives. */
export type OutputCheckResult =
  { ok: true; content: string; output: unknown } | { ok: false; retryMessage: string };

/** How a run holds its model to an `outputType`: an instruction, and a check of each final answer. */
export interface OutputCheck {
  /** Appended to the entity's instructions. */
  instructions: string;
  check(content: string): OutputCheckResult;
}

/**
 * The check of a zod `outputType`: the final answer must be JSON (a code
 * fence around it is tolerated) that the schema accepts. An answer that is
 * not gets a retry message the model sees as the next user turn; an accepted
 * one is stored as the schema's output, serialized.
 */
export function outputCheckFor(schema: z.ZodType): OutputCheck {
  const jsonSchema = JSON.stringify(z.toJSONSchema(schema, { unrepresentable: 'any' }));
  return {
    instructions: `Give your final answer as only a JSON value, no other text, matching this JSON Schema:\n${jsonSchema}`,
    check: (content) => {
      let value: unknown;
      try {
        value = JSON.parse(stripCodeFence(content));
      } catch (error) {
        return {
          ok: false,
          retryMessage: retryMessage(`it is not JSON (${(error as Error).message})`),
        };
      }
      const parsed = schema.safeParse(value);
      if (!parsed.success)
        return { ok: false, retryMessage: retryMessage(z.prettifyError(parsed.error)) };
      return { ok: true, content: JSON.stringify(parsed.data), output: parsed.data };
    },
  };
}

/** The output a finished run's stored content holds, for an entity with an `outputType`. */
export function outputOf(schema: z.ZodType | undefined, content: string | null): unknown {
  if (!schema || content === null) return content;
  return schema.parse(JSON.parse(content));
}

function retryMessage(problem: string): string {
  return `Your final answer does not match the required output type: ${problem}. Answer again with only a JSON value that matches the schema.`;
}

function stripCodeFence(content: string): string {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(content);
  return (fenced ? fenced[1]! : content).trim();
}
