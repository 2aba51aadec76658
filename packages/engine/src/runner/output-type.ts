import { z } from 'zod';

/** What checking a final answer against an entity's `outputType` gives. */
export type OutputCheckResult =
  | { ok: true; content: string; output: unknown }
  /** `problem`: why the answer was refused (what the retry message tells the model). */
  | { ok: false; retryMessage: string; problem: string };

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
        return refused(`it is not JSON (${(error as Error).message})`);
      }
      const parsed = schema.safeParse(value);
      if (!parsed.success) return refused(z.prettifyError(parsed.error));
      return { ok: true, content: JSON.stringify(parsed.data), output: parsed.data };
    },
  };
}

/** The output a finished run's stored content holds, for an entity with an `outputType`. */
export function outputOf(schema: z.ZodType | undefined, content: string | null): unknown {
  if (!schema || content === null) return content;
  return schema.parse(JSON.parse(content));
}

const RETRY_MESSAGE_START = 'Your final answer does not match the required output type: ';

function refused(problem: string): OutputCheckResult {
  return {
    ok: false,
    problem,
    retryMessage: `${RETRY_MESSAGE_START}${problem}. Answer again with only a JSON value that matches the schema.`,
  };
}

/** True for the user message a refused final answer gets (not a person's input). */
export function isOutputRetryMessage(content: string): boolean {
  return content.startsWith(RETRY_MESSAGE_START);
}

function stripCodeFence(content: string): string {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(content);
  return (fenced ? fenced[1]! : content).trim();
}
