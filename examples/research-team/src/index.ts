export { createRegistry } from './research-team.js';
export { researcherScript, researchTeamScript, teamScript } from './scripts.js';
export { recordExecution } from './tool-ledger.js';
