import type { RecoveryStore } from '@cairn/engine/store';
import { expectTypeOf, it } from 'vitest';
import type { RunQueue } from './queue-backend.js';
import type { RunEngine } from './run-engine.js';

/** The engine a move of RunEngine needs to be called on (its `this` type). */
type CalledOn<M extends keyof RunEngine> = ThisParameterType<RunEngine[M]>;

/** The worker's main thread (its engine runs in the execution threads) and the reconciler. */
type WorkerSide = RunEngine<{ runQueue: RunQueue }>;
type ReconcilerSide = RunEngine<{ runQueue: RunQueue; recovery: RecoveryStore }>;

it('gives each side the moves it has the parts for, and no other (the typecheck checks it)', () => {
  // The producer's engine (every part) makes every move.
  expectTypeOf<RunEngine>().toExtend<CalledOn<'createRun'>>();
  expectTypeOf<RunEngine>().toExtend<CalledOn<'decide'>>();
  expectTypeOf<RunEngine>().toExtend<CalledOn<'cancelRun'>>();
  expectTypeOf<RunEngine>().toExtend<CalledOn<'suspendRun'>>();
  expectTypeOf<RunEngine>().toExtend<CalledOn<'recover'>>();
  // The reconciler's recovers; neither it nor the worker's runs the engine's rules.
  expectTypeOf<ReconcilerSide>().toExtend<CalledOn<'recover'>>();
  expectTypeOf<WorkerSide>().not.toExtend<CalledOn<'recover'>>();
  expectTypeOf<WorkerSide>().not.toExtend<CalledOn<'createRun'>>();
  expectTypeOf<ReconcilerSide>().not.toExtend<CalledOn<'createRun'>>();
  expectTypeOf<ReconcilerSide>().not.toExtend<CalledOn<'cancelRun'>>();
  // What an execution asks of the queue, any side carries out.
  expectTypeOf<WorkerSide['afterExecution']>().toBeFunction();
  expectTypeOf<WorkerSide['park']>().toBeFunction();
});
