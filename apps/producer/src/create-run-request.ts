import type { CreateRunRequest, EntityRef } from '@cairn/engine';
import type { z } from 'zod';
import { budgetOptionOf } from './budget-option.js';
import type { createRunBodySchema } from './request-schemas.js';

type CreateRunBody = z.infer<typeof createRunBodySchema>;

/** The fields of a create body (`createRunBodySchema`) a caller gives: the input, any of the rest. */
type CreateRunFields = Pick<CreateRunBody, 'input'> & Partial<Omit<CreateRunBody, 'input'>>;

/**
 * The one builder of a run's create request from the API's fields: `POST
 * /v1/{agents,teams}/:name/runs`, a schedule's firing (its stored run fields) and an MCP start
 * tool (its input) each hand it to `ProducerService.enqueueRun`, which makes the `create` move
 * through `RunEngine.createRun`. `caller` is whose run it is and the key that makes it idempotent.
 */
export function createRunRequestOf(
  entity: EntityRef,
  fields: CreateRunFields,
  caller: { tenantId: string | null | undefined; idempotencyKey: string | undefined },
): CreateRunRequest {
  return {
    entity,
    input: fields.input,
    sessionId: fields.session_id,
    userId: fields.user_id,
    checkpoint: fields.checkpoint,
    metadata: fields.metadata,
    priority: fields.priority,
    deadlineMs: fields.deadline_ms,
    ...(fields.budget && { budget: budgetOptionOf(fields.budget) }),
    tenantId: caller.tenantId,
    idempotencyKey: caller.idempotencyKey,
  };
}
