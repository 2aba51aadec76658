import type {
  CheckpointMode as EngineCheckpointMode,
  RunStatus as EngineRunStatus,
} from '@cairn/engine';
import type { RunView as StoreRunView } from '@cairn/store';
import { expectTypeOf, it } from 'vitest';
import type { CheckpointMode, RunStatus, RunView } from './types.js';

// Checked by `npm run typecheck`: the client's wire types must accept what the server sends.
it("the client's wire types match the server's (checked at compile time)", () => {
  expectTypeOf<EngineRunStatus>().toEqualTypeOf<RunStatus>();
  expectTypeOf<EngineCheckpointMode>().toEqualTypeOf<CheckpointMode>();
  expectTypeOf<StoreRunView>().toExtend<RunView>();
});
