export {
  closeMcpClients,
  type McpHttpServer,
  type McpServerAddress,
  type McpStdioServer,
} from './mcp-connection.js';
export { mcpResultText, type McpCallResult } from './mcp-result.js';
export {
  MCP_META_EPOCH,
  MCP_META_IDEMPOTENCY_KEY,
  mcpTools,
  type McpToolsOptions,
} from './mcp-tools.js';
