/** What an MCP `tools/call` answers, as far as a tool result needs it. */
export interface McpCallResult {
  content?: unknown;
  /** An answer of a server that still speaks protocol 2024-10-07: the whole result. */
  toolResult?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
}

/**
 * A call's result as the model reads it: the text of its text blocks (one
 * line each); without text, its structured content; other blocks (images,
 * resources) as their JSON.
 */
export function mcpResultText(result: McpCallResult): string {
  const blocks = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  const parts = blocks.map((block) => (isTextBlock(block) ? block.text : JSON.stringify(block)));
  if (parts.length === 0 && result.structuredContent !== undefined)
    return JSON.stringify(result.structuredContent);
  if (parts.length === 0 && result.toolResult !== undefined)
    return typeof result.toolResult === 'string'
      ? result.toolResult
      : JSON.stringify(result.toolResult);
  return parts.join('\n');
}

function isTextBlock(block: unknown): block is { type: 'text'; text: string } {
  return (
    typeof block === 'object' &&
    block !== null &&
    (block as { type?: unknown }).type === 'text' &&
    typeof (block as { text?: unknown }).text === 'string'
  );
}
