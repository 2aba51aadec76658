export * from './run-status.js';
export * from './continue-rules.js';
export * from './error-disposition.js';
export { PauseSignal } from '../runner/pause-signal.js';
export { interruptedToolResult } from './open-tool-calls.js';
export { processPickup, type Pickup, type PickupOutcome, type PickupOptions } from './pickup.js';
export { attemptReasonFor } from './attempt-reason.js';
export { watchLease, type LeaseWatch, type LeaseWatchOptions } from './lease-watch.js';
export { parseStoredMessages } from './stored-state.js';
