import { RunNotFoundError, type EntityRef } from '@cairn/engine';
import type { RunView } from '@cairn/store';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { mayAccess } from '../api-key-auth.js';
import type { Principal } from '../api-keys.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../idempotency-key.js';
import { toPostedDecision } from '../posted-decision.js';
import type { ProducerClient } from '../producer-client.js';
import { createRunBodySchema, decisionsBodySchema } from '../request-schemas.js';
import { assertFieldsFit, type RunLimits } from '../run-limits.js';

/** What {@link cairnMcpServer} serves from. */
export interface CairnMcpServerDeps {
  client: ProducerClient;
  /** The key the request came with: runs it starts are its tenant's; it reads and decides its tenant's runs only. */
  principal: Principal;
  /** The entities live workers serve: one start tool each. */
  entities: readonly EntityRef[];
  limits: RunLimits;
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
}: CairnMcpServerDeps): McpServer {
  const server = new McpServer({ name: 'cairn', version: '0.1.0' });
  const ownRun = async (id: string): Promise<RunView> => {
    const owner = await client.runOwner(id);
    const run = owner && mayAccess(principal, owner.tenantId) ? await client.getRun(id) : undefined;
    if (!run) throw new RunNotFoundError(id);
    return run;
  };

  for (const entity of entities) {
    server.registerTool(
      startToolName(entity),
      {
        description: `Starts a durable run of the ${entity.kind} "${entity.name}" with this input; answers its run id at once (the run goes on in Cairn's workers: read it with get_run).`,
        inputSchema: startRunInput.shape,
      },
      async (body) => {
        assertFieldsFit(body, limits);
        const run = await client.enqueueRun({
          entity,
          input: body.input,
          sessionId: body.session_id,
          metadata: body.metadata,
          tenantId: principal.tenantId,
          idempotencyKey: body.idempotency_key,
        });
        return answer({ run_id: run.runId, session_id: run.sessionId, status: run.status });
      },
    );
  }

  server.registerTool(
    'get_run',
    {
      description:
        "A run's status, final answer or error, and the actions it waits on a person for.",
      inputSchema: { run_id: runId },
    },
    async ({ run_id }) => answer(runSummary(await ownRun(run_id))),
  );

  server.registerTool(
    'list_pending_actions',
    {
      description:
        'The undecided actions of a paused run (its members included): approvals, external results and budgets, each with its action_id.',
      inputSchema: { run_id: runId },
    },
    async ({ run_id }) => answer({ pending_actions: pendingOf(await ownRun(run_id)) }),
  );

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
