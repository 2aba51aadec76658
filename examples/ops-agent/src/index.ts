export { createRegistry } from './ops-agent.js';
export { opsScript, opsTeamScript } from './scripts.js';
export { askOperator, checkStatus, restartService } from './tools.js';
