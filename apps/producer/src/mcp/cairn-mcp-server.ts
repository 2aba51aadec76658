import { IDLE_STATUSES, RunNotFoundError, type EntityRef } from '@cairn/engine';
import type { RunView } from '@cairn/store';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import { mayAccess } from '../api-key-auth.js';
import type { Principal } from '../api-keys.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../idempotency-key.js';
import { toPostedDecision } from '../posted-decision.js';
import type { ProducerClient } from '../producer-client.js';
import { createRunRequestOf } from '../create-run-request.js';
import { createRunBodySchema, decisionsBodySchema } from '../request-schemas.js';
import { assertFieldsFit, type RunLimits } from '../run-limits.js';
import { waitForIdleRun } from './run-wait.js';

/** What {@link cairnMcpServer} serves from. */
export interface CairnMcpServerDeps {
  client: ProducerClient;
  /** The key the request came with: runs it starts are its tenant's; it reads and decides its tenant's runs only. */
  principal: Principal;
  /** The entities live workers serve: one start tool each. */
  entities: readonly EntityRef[];
  limits: RunLimits;
  /** How long a start tool waits for its run to end, and how often it reads it meanwhile. */
  wait: McpWaitSettings;
  /** The address of a run's page, for answers that leave the run going on. */
  pageUrl: (runId: string) => string;
  /** The one tool a `tools/call` request names: the server is built with it alone (a server serves one request). @defaultValue every tool */
  only?: string;
}

/** How long `/mcp`'s start tools wait for their run (docs/mcp.md, "Waiting for the result"). */
interface McpWaitSettings {
  /** The bound: a run still going after it is answered with its run id and page. */
  boundMs: number;
  /** How often the run's status and events are read while waiting. */
  pollMs: number;
}

/** The name of the tool that starts a run of `entity`: MCP tool names take letters, digits, `_`, `-` and `.`. */
export function startToolName(entity: EntityRef): string {
  return `start_${entity.kind}_${entity.name}`;
}

const runId = z.string().min(1).max(200).describe('The run id a start tool answered with');
const startRunInput = createRunBodySchema
  .pick({ input: true, session_id: true, metadata: true })
  .extend({
    idempotency_key: z
      .string()
      .trim()
      .min(1)
      .max(MAX_IDEMPOTENCY_KEY_LENGTH)
      .optional()
      .describe('The same key again answers the run it started, as the Idempotency-Key header'),
  });

/** The JSON Schema validator of every server (the SDK builds an Ajv per server otherwise: most of a request's cost). */
const JSON_SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();

/** The start tools' input under a bound, built once per bound (a server is built per request). */
const startInputs = new Map<number, ReturnType<typeof startInputWith>>();
function startInputOf(boundMs: number) {
  let schema = startInputs.get(boundMs);
  if (!schema) startInputs.set(boundMs, (schema = startInputWith(boundMs)));
  return schema;
}
function startInputWith(boundMs: number) {
  return startRunInput.extend({
    wait_ms: z
      .number()
      .int()
      .min(0)
      .max(boundMs)
      .optional()
      .describe(
        `How long to wait for the run to end before answering with its run id, in ms (default and most: ${boundMs}; 0 answers at once)`,
      ),
  });
}

/**
 * Cairn as an MCP server, for one request (the transport is stateless, so
 * any producer answers any request): a tool per served entity that starts
 * a run, `get_run`, `list_pending_actions` and `decide_actions`, under the
 * request's key and tenant as `/v1` is. A refusal (an unknown or foreign
 * run, a conflicting decision) is a tool result with `isError`, its text the
 * API's message.
 */
export function cairnMcpServer({
  client,
  principal,
  entities,
  limits,
  wait,
  pageUrl,
  only,
}: CairnMcpServerDeps): McpServer {
  const wanted = (name: string) => only === undefined || only === name;
  const server = new McpServer(
    { name: 'cairn', version: '0.1.0' },
    { jsonSchemaValidator: JSON_SCHEMA_VALIDATOR },
  );
  const ownRun = async (id: string): Promise<RunView> => {
    const owner = await client.runOwner(id);
    const run = owner && mayAccess(principal, owner.tenantId) ? await client.getRun(id) : undefined;
    if (!run) throw new RunNotFoundError(id);
    return run;
  };

  const startInput = startInputOf(wait.boundMs);
  for (const entity of entities.filter((e) => wanted(startToolName(e)))) {
    server.registerTool(
      startToolName(entity),
      {
        description: `Starts a durable run of the ${entity.kind} "${entity.name}" with this input. A run that ends (or pauses for a person) within wait_ms answers with its result; a longer one answers with its run id and the URL of its page, and goes on in Cairn's workers (read it with get_run). With a progressToken, each event the run records while waited for is a progress notification.`,
        inputSchema: startInput.shape,
      },
      async (body, extra) => {
        assertFieldsFit(body, limits);
        const run = await client.enqueueRun(
          createRunRequestOf(
            entity,
            { input: body.input, session_id: body.session_id, metadata: body.metadata },
            { tenantId: principal.tenantId, idempotencyKey: body.idempotency_key },
          ),
        );
        const started = { session_id: run.sessionId, page_url: pageUrl(run.runId) };
        const boundMs = body.wait_ms ?? wait.boundMs;
        if (boundMs === 0) return answer({ run_id: run.runId, status: run.status, ...started });
        const { progressToken } = extra._meta ?? {};
        let progress = 0;
        const status = await waitForIdleRun(client, run.runId, {
          boundMs,
          pollMs: wait.pollMs,
          signal: extra.signal,
          ...(progressToken !== undefined && {
            onEvent: (event) =>
              extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress: ++progress, message: event.type },
              }),
          }),
        });
        if (status && IDLE_STATUSES.includes(status))
          return answer({ ...runSummary(await ownRun(run.runId)), ...started });
        return answer({ run_id: run.runId, status: status ?? run.status, ...started });
      },
    );
  }

  if (wanted('get_run'))
    server.registerTool(
      'get_run',
      {
        description:
          "A run's status, final answer or error, and the actions it waits on a person for.",
        inputSchema: { run_id: runId },
      },
      async ({ run_id }) => answer(runSummary(await ownRun(run_id))),
    );

  if (wanted('list_pending_actions'))
    server.registerTool(
      'list_pending_actions',
      {
        description:
          'The undecided actions of a paused run (its members included): approvals, external results and budgets, each with its action_id.',
        inputSchema: { run_id: runId },
      },
      async ({ run_id }) => answer({ pending_actions: pendingOf(await ownRun(run_id)) }),
    );

  if (wanted('decide_actions'))
    server.registerTool(
      'decide_actions',
      {
        description:
          "Decides pending actions of a paused run: approve, edit (new args), reject (a message) or result (an external call's output). The run resumes once its last action is decided.",
        inputSchema: { run_id: runId, decisions: decisionsBodySchema.shape.decisions },
      },
      async ({ run_id, decisions }) => {
        await ownRun(run_id);
        const result = await client.decide(run_id, decisions.map(toPostedDecision), {
          tenantId: principal.tenantId,
        });
        return answer(result);
      },
    );
  return server;
}

/** A tool's answer: its JSON as text, and as structured content. */
function answer(value: object) {
  return {
    content: [{ type: 'text' as const, text: JSON.stringify(value) }],
    structuredContent: value as Record<string, unknown>,
  };
}

function runSummary(run: RunView) {
  return {
    run_id: run.run_id,
    entity: run.entity,
    status: run.status,
    content: run.content,
    error: run.error,
    pending_actions: pendingOf(run),
    usage: { total_tokens: run.usage.total_tokens, cost_usd: run.usage.cost_usd },
  };
}

function pendingOf(run: RunView) {
  return run.pending_actions
    .filter((action) => action.status === 'pending')
    .map((action) => ({
      action_id: action.action_id,
      kind: action.kind,
      tool: action.tool,
      args: action.args,
      member_path: action.member_path,
      expires_at: action.expires_at,
    }));
}
