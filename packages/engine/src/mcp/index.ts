/** @public The address of an MCP server (`McpServerAddress`) is one of these. */
export {
  closeMcpClients,
  type McpHttpServer,
  type McpServerAddress,
  type McpStdioServer,
} from './mcp-connection.js';
export { MCP_META_EPOCH, MCP_META_IDEMPOTENCY_KEY } from './mcp-tools.js';
/** @public */
export { mcpTools, type McpToolsOptions } from './mcp-tools.js';
