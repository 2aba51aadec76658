export { buildResearchTeam, createRegistry, type ResearchTeamOptions } from './research-team.js';
export { researcherScript, teamScript } from './scripts.js';
export { slowSearch, slowFetchDetail, toolDelayMs } from './tools.js';
export { recordExecution } from './tool-ledger.js';
