/** @public The registry module's contract (`CAIRN_REGISTRY=@cairn/ops-agent`). */
export { createRegistry } from './ops-agent.js';
export { opsScript, opsTeamScript } from './scripts.js';
export { askOperator, checkStatus, restartService } from './tools.js';
