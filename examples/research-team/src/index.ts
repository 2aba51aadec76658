export { createRegistry } from './research-team.js';
export { researcherScript, teamScript } from './scripts.js';
export { recordExecution } from './tool-ledger.js';
