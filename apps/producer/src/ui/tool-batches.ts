import type { StoredEvent, ToolCallView } from '@cairn/store';
import { html } from 'hono/html';
import { foldedText, prettyJson, type Html } from './page-layout.js';
import { seconds } from './waterfall-model.js';

/** The MCP server of each call of an `mcpTools` tool, by tool call id, from the run's `ToolCallStarted` events. */
export function mcpServersOf(events: readonly StoredEvent[]): Map<string, string> {
  const servers = new Map<string, string>();
  for (const { type, data } of events) {
    const { toolCallId, mcpServer } = (data ?? {}) as { toolCallId?: unknown; mcpServer?: unknown };
    if (
      type === 'ToolCallStarted' &&
      typeof toolCallId === 'string' &&
      typeof mcpServer === 'string'
    )
      servers.set(toolCallId, mcpServer);
  }
  return servers;
}

/** The run's tool calls grouped by batch: each call's name (and MCP server), args, result, status and duration, and the member run it started. */
export function toolBatches(
  tools: readonly ToolCallView[],
  mcpServers: ReadonlyMap<string, string>,
): Html {
  if (tools.length === 0) return html`<p class="empty">No tool call yet.</p>`;
  const batches = new Map<number, ToolCallView[]>();
  for (const call of tools) batches.set(call.batch, [...(batches.get(call.batch) ?? []), call]);
  return html`${[...batches].map(
    ([batch, calls]) =>
      html`<div class="batch" data-batch="${batch}">
        <h3>Batch ${batch}</h3>
        <table class="tools">
          <thead>
            <tr>
              <th>Tool</th>
              <th>Status</th>
              <th>Duration</th>
              <th>Args</th>
              <th>Result</th>
            </tr>
          </thead>
          <tbody>
            ${calls.map(
              (call) =>
                html`<tr data-tool-call-id="${call.tool_call_id}" data-status="${call.status}">
                  <td>
                    <strong>${call.name}</strong><br /><code class="muted"
                      >${call.tool_call_id}</code
                    >
                    ${mcpServerNote(mcpServers.get(call.tool_call_id))}
                    ${
                      call.child_run_id
                        ? html`<br /><a href="/ui/runs/${encodeURIComponent(call.child_run_id)}"
                              >member run</a
                            >`
                        : ''
                    }
                  </td>
                  <td><span class="tool-status tool-${call.status}">${call.status}</span></td>
                  <td>${duration(call.started_at, call.ended_at)}</td>
                  <td>${foldedText(prettyJson(call.args))}</td>
                  <td>
                    ${call.result === null ? html`<span class="muted">–</span>` : foldedText(call.result)}
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>`,
  )}`;
}

function mcpServerNote(server: string | undefined): Html | '' {
  return server
    ? html`<br /><span class="muted mcp-server" data-mcp-server="${server}"
          >MCP server <code>${server}</code></span
        >`
    : '';
}

function duration(startedAt: string, endedAt: string | null): string {
  return endedAt ? seconds(Date.parse(endedAt) - Date.parse(startedAt)) : 'running';
}
