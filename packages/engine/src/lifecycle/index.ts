export * from './run-status.js';
export * from './continue-rules.js';
export * from './error-disposition.js';
export { PauseSignal } from './pause.js';
