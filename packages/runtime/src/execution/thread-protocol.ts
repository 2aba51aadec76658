import type { ModelPrice } from '@cairn/engine';
import type { SerializedError } from '@cairn/engine/lifecycle';
import type { RunObservation } from '../metrics/run-observation.js';
import type { CapacityConfig } from '../capacity/capacity-settings.js';
import type { ExecutorSettings } from './configured-executor.js';
import type { RunJobOutcome, RunJobRequest } from './run-job.js';

/** What an execution thread is started with (`workerData`): plain values only. */
export interface ExecutionThreadConfig extends ExecutorSettings {
  /** Module exporting `createRegistry({ model? })`. */
  registryModule: string;
  /** `scripted`, `openai:<model>` or `openai-chat:<model>`. */
  model: string;
  openaiApiKey?: string;
  openaiBaseUrl?: string;
  /** `CAIRN_MODEL_STREAM`. */
  modelStream?: boolean;
  /** Postgres connections of this thread's pool. */
  dbPoolMax: number;
  /** `CAIRN_PG_NAMED_STATEMENTS`. */
  namedStatements: boolean;
  /** The queue's name and prefix, under which the limiter keeps its Redis keys. */
  queueName: string;
  queuePrefix?: string;
  /** `CAIRN_MODEL_LIMITS`, `CAIRN_CAPACITY_WAIT_MS`, `CAIRN_CAPACITY_LINE`, `CAIRN_TENANT_WEIGHTS`. */
  capacity: CapacityConfig;
  /** `CAIRN_MODEL_PRICES`, as parsed. */
  modelPrices: Record<string, ModelPrice>;
}

/** Messages from the worker's main thread to an execution thread. */
export type ToThread =
  | { type: 'execute'; id: number; request: RunJobRequest }
  | { type: 'handover-all' }
  | { type: 'ping' }
  | { type: 'close' };

/** Log levels a thread forwards to the main thread's logger. */
export type ThreadLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Messages from an execution thread to the main thread. */
export type FromThread =
  | { type: 'ready' }
  | { type: 'init-failed'; message: string }
  | { type: 'outcome'; id: number; outcome: RunJobOutcome }
  /** The execution threw: the error keeps its kind across the thread, so the main thread classifies it like the thread would. */
  | { type: 'failed'; id: number; error: SerializedError }
  | { type: 'pong' }
  | { type: 'log'; level: ThreadLogLevel; fields: Record<string, unknown>; message: string }
  | { type: 'observation'; observation: RunObservation }
  | { type: 'closed' };
