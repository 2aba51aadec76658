import { z } from 'zod';
import {
  cancelRunBodySchema,
  continueRunBodySchema,
  createRunBodySchema,
  decisionSchema,
  decisionsBodySchema,
  forkRunBodySchema,
  resumeRunBodySchema,
  suspendRunBodySchema,
} from '../request-schemas.js';
import {
  cancelledRunSchema,
  continuedRunSchema,
  createdRunSchema,
  decisionsResultSchema,
  errorBodySchema,
  forkedFromSchema,
  forkedRunSchema,
  messageSchema,
  pendingActionSchema,
  resumedRunSchema,
  runViewSchema,
  sessionViewSchema,
  suspendedRunSchema,
  usageSchema,
} from './answer-schemas.js';
import {
  API_OPERATIONS,
  COMMON_ERRORS,
  type ApiAnswer,
  type ApiOperation,
} from './api-operations.js';
import { WEBHOOK_OPERATIONS, WEBHOOK_SCHEMAS } from './webhook-operations.js';
import { SCHEDULE_OPERATIONS, SCHEDULE_SCHEMAS } from './schedule-operations.js';

/** Where the document is served. */
export const OPENAPI_PATH = '/openapi.json';

/** The name of the API keys' security scheme in the document. */
const SECURITY_SCHEME = 'apiKey';

/** An OpenAPI 3.1 document, as plain JSON. */
export type OpenApiDocument = Record<string, unknown> & {
  openapi: '3.1.0';
  paths: Record<string, Record<string, OpenApiOperationObject>>;
  components: { schemas: Record<string, Record<string, unknown>> } & Record<string, unknown>;
};

/** One operation of {@link OpenApiDocument}. */
export interface OpenApiOperationObject {
  operationId: string;
  summary: string;
  tags: string[];
  description?: string;
  parameters?: unknown[];
  requestBody?: { required: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
}

/** The schemas the document names in `components.schemas`: the routes' own zod schemas, request and answer. */
const NAMED_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  CreateRunBody: createRunBodySchema,
  ContinueRunBody: continueRunBodySchema,
  ForkRunBody: forkRunBodySchema,
  CancelRunBody: cancelRunBodySchema,
  SuspendRunBody: suspendRunBodySchema,
  ResumeRunBody: resumeRunBodySchema,
  DecisionsBody: decisionsBodySchema,
  Decision: decisionSchema,
  CreatedRun: createdRunSchema,
  ContinuedRun: continuedRunSchema,
  ForkedRun: forkedRunSchema,
  ForkedFrom: forkedFromSchema,
  CancelledRun: cancelledRunSchema,
  SuspendedRun: suspendedRunSchema,
  ResumedRun: resumedRunSchema,
  DecisionsResult: decisionsResultSchema,
  RunView: runViewSchema,
  Message: messageSchema,
  Usage: usageSchema,
  PendingAction: pendingActionSchema,
  SessionView: sessionViewSchema,
  ErrorBody: errorBodySchema,
  ...WEBHOOK_SCHEMAS,
  ...SCHEDULE_SCHEMAS,
};

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The named schemas as JSON Schema 2020-12 (OpenAPI 3.1's dialect), refs between them pointing into `components`. */
function componentSchemas(): Record<string, Record<string, unknown>> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(NAMED_SCHEMAS)) registry.add(schema, { id });
  // `input`: what a client sends, and for answers no `additionalProperties: false`, so a new field breaks no client.
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'input',
    uri: (id) => schemaRef(id).$ref,
  });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => {
      const { $schema: _dialect, $id: _id, ...rest } = schema as Record<string, unknown>;
      return [id, rest];
    }),
  );
}

function nameOf(schema: z.ZodType): string {
  const found = Object.entries(NAMED_SCHEMAS).find(([, named]) => named === schema);
  if (!found) throw new Error('a schema of an API operation is missing from NAMED_SCHEMAS');
  return found[0];
}

function answerObject(answer: ApiAnswer): OpenApiOperationObject['responses'][string] {
  if ('json' in answer)
    return {
      description: answer.description,
      content: { 'application/json': { schema: schemaRef(nameOf(answer.json)) } },
    };
  if ('eventStream' in answer)
    return {
      description: answer.description,
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    };
  return { description: answer.description };
}

function operationObject(op: ApiOperation): OpenApiOperationObject {
  const errors = { ...COMMON_ERRORS, ...op.errors };
  return {
    operationId: op.operationId,
    summary: op.summary,
    tags: [op.tag],
    ...(op.description !== undefined && { description: op.description }),
    ...(op.parameters && { parameters: [...op.parameters] }),
    ...(op.body && {
      requestBody: {
        required: op.body.required,
        content: { 'application/json': { schema: schemaRef(nameOf(op.body.schema)) } },
      },
    }),
    responses: {
      ...Object.fromEntries(
        Object.entries(op.answers).map(([status, answer]) => [status, answerObject(answer)]),
      ),
      ...Object.fromEntries(
        Object.entries(errors).map(([status, description]) => [
          status,
          { description, content: { 'application/json': { schema: schemaRef('ErrorBody') } } },
        ]),
      ),
    },
  };
}

/** Builds the document (docs/openapi.md) from {@link API_OPERATIONS}, {@link SCHEDULE_OPERATIONS} and the routes' zod schemas. */
function buildDocument(): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const op of [...API_OPERATIONS, ...SCHEDULE_OPERATIONS, ...WEBHOOK_OPERATIONS])
    (paths[op.path] ??= {})[op.method] = operationObject(op);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Cairn producer API',
      version: 'v1',
      description:
        'Start, follow, continue, fork, cancel and decide durable agent runs. Bodies are JSON; every error answers `{ error, message }`.',
    },
    tags: [
      { name: 'runs', description: 'Runs of agents and teams' },
      { name: 'sessions', description: "A tenant's sessions and their runs" },
      { name: 'webhooks', description: 'Signed notifications of runs that pause or end' },
      { name: 'schedules', description: 'Runs started on a cron pattern or an interval' },
    ],
    security: [{ [SECURITY_SCHEME]: [] }],
    paths,
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A key of CAIRN_API_KEYS (`key`: admin, or `tenant:key`: bound to its tenant) or of CAIRN_READ_API_KEYS (GET only). With no keys configured, no auth.',
        },
      },
    },
  };
}

let built: OpenApiDocument | undefined;

/** The producer's OpenAPI 3.1 document, built once. */
export function openApiDocument(): OpenApiDocument {
  return (built ??= buildDocument());
}
