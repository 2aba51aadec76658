import { DELEGATE_TOOL_NAME } from '@cairn/engine';
import {
  firstUserInput,
  toolResults,
  type ScriptContext,
  type ScriptedReply,
} from '@cairn/engine/testing';

/** The researcher's scripted flow: search once, fetch each result one call at a time, then report. */
export function researcherScript({ messages }: ScriptContext): ScriptedReply {
  const searches = toolResults(messages, 'slow_search');
  const fetches = toolResults(messages, 'slow_fetch_detail');
  if (searches.length === 0) {
    return {
      toolCalls: [{ name: 'slow_search', arguments: { query: topicOf(firstUserInput(messages)) } }],
    };
  }
  const results = searches[0]!.content
    .split(':')
    .slice(1)
    .join(':')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const next = results[fetches.length];
  if (next) return { toolCalls: [{ name: 'slow_fetch_detail', arguments: { item: next } }] };
  const details = fetches.map((f) => `- ${f.content}`).join('\n');
  return { text: `Research report.\n${searches[0]!.content}\n${details}` };
}

/** The team's scripted flow: delegate once to the researcher, then summarize what it found. */
export function teamScript({ messages }: ScriptContext): ScriptedReply {
  const delegations = toolResults(messages, DELEGATE_TOOL_NAME);
  if (delegations.length === 0) {
    return {
      toolCalls: [
        {
          name: DELEGATE_TOOL_NAME,
          arguments: { member: 'researcher', task: firstUserInput(messages) },
        },
      ],
    };
  }
  const report = delegations[delegations.length - 1]!.content;
  return { text: `Summary of the research team's findings:\n${report}` };
}

function topicOf(input: string): string {
  const quoted = /'([^']+)'/.exec(input);
  return quoted?.[1] ?? input;
}

/**
 * The whole team's flow for one server that answers both the team and its
 * member, as a fake OpenAI provider does: the researcher is the one offered
 * `slow_search`.
 */
export function researchTeamScript(context: ScriptContext): ScriptedReply {
  return context.tools.some((tool) => tool.name === 'slow_search')
    ? researcherScript(context)
    : teamScript(context);
}
