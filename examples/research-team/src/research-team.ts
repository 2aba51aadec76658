import { Agent, Registry, Team, type CheckpointMode, type Model } from '@cairn/engine';
import { ScriptedModel } from '@cairn/engine/testing';
import { researcherScript, teamScript } from './scripts.js';
import { slowFetchDetail, slowSearch } from './tools.js';

/** Options of {@link createRegistry}. */
export interface ResearchTeamOptions {
  /** A model for both the team and the researcher; the scripted flow when omitted. */
  model?: Model;
  /** Of the team and the researcher. @defaultValue 'run' (the seed's; its team raises it per run with `checkpoint: 'tool-batch'`) */
  checkpoint?: CheckpointMode;
  /** Latency of each scripted turn; `RESEARCH_MODEL_LATENCY_MS` overrides it. @defaultValue 200 */
  scriptedLatencyMs?: number;
  /** Tool-call ids of the scripted models; `RESEARCH_TOOL_CALL_IDS=fresh` overrides it. @defaultValue 'derived' */
  scriptedToolCallIds?: 'derived' | 'fresh';
}

function scriptedToolCallIds(options: ResearchTeamOptions): 'derived' | 'fresh' {
  const fromEnv = process.env.RESEARCH_TOOL_CALL_IDS;
  if (fromEnv === 'fresh' || fromEnv === 'derived') return fromEnv;
  return options.scriptedToolCallIds ?? 'derived';
}

function scriptedLatencyMs(options: ResearchTeamOptions): number {
  const fromEnv = Number(process.env.RESEARCH_MODEL_LATENCY_MS);
  if (
    process.env.RESEARCH_MODEL_LATENCY_MS !== undefined &&
    Number.isFinite(fromEnv) &&
    fromEnv >= 0
  ) {
    return fromEnv;
  }
  return options.scriptedLatencyMs ?? 200;
}

/** The seed's team: `research-team` delegates to `researcher` (slow_search, slow_fetch_detail), then summarizes. */
export function buildResearchTeam(options: ResearchTeamOptions = {}): Team {
  const latencyMs = scriptedLatencyMs(options);
  // The seed's entities persist at the end unless a run asks for more; Cairn's own default is 'tool-batch'.
  const checkpoint = options.checkpoint ?? 'run';
  const toolCallIds = scriptedToolCallIds(options);
  const researcher = new Agent({
    name: 'researcher',
    role: 'Researches a topic using slow_search and slow_fetch_detail.',
    model:
      options.model ??
      new ScriptedModel({
        name: 'scripted:researcher',
        decide: researcherScript,
        latencyMs,
        toolCallIds,
      }),
    tools: [slowSearch, slowFetchDetail],
    checkpoint,
    instructions:
      'Use slow_search to find results, then call slow_fetch_detail on EACH result one at a time. Report what you learned.',
  });
  return new Team({
    name: 'research-team',
    model:
      options.model ??
      new ScriptedModel({
        name: 'scripted:research-team',
        decide: teamScript,
        latencyMs,
        toolCallIds,
      }),
    members: [researcher],
    checkpoint,
    instructions: 'Delegate the research to the researcher, then summarize.',
  });
}

/** The registry a worker loads by default (`CAIRN_REGISTRY` unset): the research team and its researcher. */
export function createRegistry(options: ResearchTeamOptions = {}): Registry {
  return new Registry({ teams: [buildResearchTeam(options)] });
}
