export { createRegistry, type OpsAgentOptions } from './ops-agent.js';
export { opsScript, opsTeamScript } from './scripts.js';
export { askOperator, checkStatus, restartService, type RestartServiceOptions } from './tools.js';
export { recordOpsExecution } from './tool-ledger.js';
