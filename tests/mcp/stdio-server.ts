/**
 * The knowledge-base MCP server over stdio: a process a worker spawns (see knowledge-base-server.ts).
 * `MCP_LEDGER` and `MCP_STALL_EPOCH` set its options.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { knowledgeBaseServer } from './knowledge-base-server.js';

const { MCP_LEDGER: ledger, MCP_STALL_EPOCH: stallEpoch } = process.env;
await knowledgeBaseServer(
  { calls: [], cancelled: [] },
  {
    ...(ledger && { ledger }),
    ...(stallEpoch && { stallEpoch: Number(stallEpoch) }),
  },
).connect(new StdioServerTransport());
