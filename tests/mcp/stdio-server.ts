/** The knowledge-base MCP server over stdio: a process a worker spawns (see knowledge-base-server.ts). */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { knowledgeBaseServer } from './knowledge-base-server.js';

await knowledgeBaseServer({ calls: [], cancelled: [] }).connect(new StdioServerTransport());
