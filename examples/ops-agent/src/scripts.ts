import { DELEGATE_TOOL_NAME } from '@cairn/engine';
import {
  firstUserInput,
  toolResults,
  type ScriptContext,
  type ScriptedReply,
} from '@cairn/engine/testing';

/**
 * The ops agent's scripted flow, decided from the messages alone. "restart
 * a, b": checks the first service and restarts each in one batch (one
 * ungated call, the rest gated); "ask ...": asks the operator. Once every
 * call has its result, the answer quotes each tool message it got.
 */
export function opsScript({ messages }: ScriptContext): ScriptedReply {
  const input = firstUserInput(messages);
  if (toolResults(messages).length === 0) {
    if (/^ask\b/i.test(input))
      return {
        toolCalls: [
          { name: 'ask_operator', arguments: { question: input.replace(/^ask\s*/i, '') } },
        ],
      };
    const services = servicesIn(input);
    return {
      toolCalls: [
        { name: 'check_status', arguments: { service: services[0] ?? 'api' } },
        ...services.map((service) => ({ name: 'restart_service', arguments: { service } })),
      ],
    };
  }
  const lines = toolResults(messages).map((m) => `- ${m.name}: ${m.content}`);
  return { text: `Incident report:\n${lines.join('\n')}` };
}

/** The ops team's flow: hands the task to the ops agent once, then reports its answer. */
export function opsTeamScript({ messages }: ScriptContext): ScriptedReply {
  const delegations = toolResults(messages, DELEGATE_TOOL_NAME);
  if (delegations.length === 0) {
    return {
      toolCalls: [
        {
          name: DELEGATE_TOOL_NAME,
          arguments: { member: 'ops-agent', task: firstUserInput(messages) },
        },
      ],
    };
  }
  return { text: `Team report:\n${delegations.at(-1)!.content}` };
}

function servicesIn(input: string): string[] {
  const match = /restart\s+(.+)/i.exec(input);
  return (match?.[1] ?? 'api')
    .split(/[,\s]+(?:and\s+)?/)
    .map((s) => s.trim())
    .filter(Boolean);
}
