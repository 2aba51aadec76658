import {
  assertNever,
  type IntentResult,
  type JobIntent,
  type JobPort,
  type JobSpec,
} from '@cairn/engine/lifecycle';
import { resumeJob, type CatalogJob } from './job-catalog.js';
import type { RunQueue } from './queue-backend.js';

/** The catalog job a lifecycle {@link JobSpec} names (its id and options follow from `jobOptionsFor`). */
export function catalogJobOf(spec: JobSpec): CatalogJob {
  switch (spec.name) {
    case 'run':
      return {
        name: 'run',
        data: {
          runId: spec.runId,
          ...fairLineOf(spec),
          ...(spec.entity && { entity: { kind: spec.entity.kind, name: spec.entity.name } }),
        },
      };
    case 'continue':
      return spec.resumeOf !== undefined
        ? resumeJob(spec.runId, spec.resumeOf, fairLineOf(spec))
        : {
            name: 'continue',
            data: { runId: spec.runId, reason: spec.reason, ...fairLineOf(spec) },
          };
    case 'expire':
      return {
        name: 'expire',
        data: { runId: spec.runId, actionId: spec.actionId, expiresAt: spec.expiresAt },
      };
    default:
      return assertNever(spec);
  }
}

function fairLineOf(spec: { tenant?: string | null; priority?: number }) {
  return {
    ...(spec.tenant !== undefined && { tenant: spec.tenant }),
    ...(spec.priority !== undefined && { priority: spec.priority }),
  };
}

/**
 * Carries out the lifecycle's job intents on the run queue, in order: the
 * queue's only part in a move of a run. Returns one result per intent.
 */
export async function carryOutIntents(
  runQueue: RunQueue,
  intents: readonly JobIntent[],
): Promise<IntentResult[]> {
  const results: IntentResult[] = [];
  for (const intent of intents) results.push(await carryOut(runQueue, intent));
  return results;
}

async function carryOut(runQueue: RunQueue, intent: JobIntent): Promise<IntentResult> {
  switch (intent.kind) {
    case 'enqueue': {
      if (intent.onlyWithoutLiveJob && (await runQueue.liveJobFor(intent.job.runId)))
        return 'had-live-job';
      const job = catalogJobOf(intent.job);
      await (intent.replaceEnded ? runQueue.addReplacingEnded(job) : runQueue.add(job));
      return 'added';
    }
    case 'remove-job':
      // A job that is gone, or locked by a worker that took it meanwhile, is left as it is.
      await runQueue.queue.remove(intent.jobId).catch(() => 0);
      return 'removed';
    default:
      return assertNever(intent);
  }
}

/** The run queue as the lifecycle's {@link JobPort}: intents carried out by {@link carryOutIntents}. */
export function jobPortOf(runQueue: RunQueue): JobPort {
  return {
    carryOut: (intents) => carryOutIntents(runQueue, intents),
    liveJobOf: async (runId) => {
      const live = await runQueue.liveJobFor(runId);
      return live?.job.id === undefined
        ? undefined
        : { jobId: live.job.id, active: live.state === 'active' };
    },
  };
}
