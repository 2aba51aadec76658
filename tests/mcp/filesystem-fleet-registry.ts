/**
 * The registry of the published-server fleet scenario: `fs-scribe` takes its tools from
 * `@modelcontextprotocol/server-filesystem` over stdio (the npm package, spawned once per worker,
 * allowed only `MCP_FS_DIR`). A run writes {@link SCRIBE_STEPS} lines into `journal.txt`, one
 * `edit_file` a turn (each replaces the `END` marker with its line and the marker, so a call sent
 * twice leaves its line twice), then reads the file back as its answer.
 *
 * The first execution to ask the model after the first edit committed stalls there, before the
 * second edit is sent, and drops the `MCP_FS_STALL_MARKER` file: a test kills that worker between
 * two MCP calls. Any later execution finds the marker and goes on.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, Registry, type Model } from '@cairn/engine';
import { mcpTools } from '@cairn/engine/mcp';
import { firstUserInput, ScriptedModel, toolResults } from '@cairn/engine/testing';

/** Lines a run writes, one `edit_file` call a turn. */
export const SCRIBE_STEPS = 3;

/** The file the scribe writes, in `MCP_FS_DIR`. */
export const JOURNAL = 'journal.txt';

/** The marker each edit replaces (with its line and the marker again). */
export const JOURNAL_END = 'END';

/** The published server's entry point, resolved from the installed package. */
export const FILESYSTEM_SERVER = fileURLToPath(
  import.meta.resolve('@modelcontextprotocol/server-filesystem/dist/index.js'),
);

/** @public The registry: the filesystem server's `edit_file` and `read_text_file` as `fs_*`. */
export async function createRegistry(): Promise<Registry> {
  const dir = process.env.MCP_FS_DIR;
  if (!dir) throw new Error('MCP_FS_DIR must name the directory the filesystem server may use');
  const journal = join(dir, JOURNAL);
  const tools = await mcpTools({
    server: { command: process.execPath, args: [FILESYSTEM_SERVER, dir] },
    prefix: 'fs',
    include: ['edit_file', 'read_text_file'],
  });
  const scripted = new ScriptedModel({
    name: 'scripted:fs-scribe',
    toolCallIds: 'fresh',
    decide: ({ messages }) => {
      const results = toolResults(messages);
      if (results.length < SCRIBE_STEPS) {
        const line = `${firstUserInput(messages)} ${results.length + 1}`;
        const edits = [{ oldText: JOURNAL_END, newText: `${line}\n${JOURNAL_END}` }];
        return { toolCalls: [{ name: 'fs_edit_file', arguments: { path: journal, edits } }] };
      }
      if (results.length === SCRIBE_STEPS) {
        return { toolCalls: [{ name: 'fs_read_text_file', arguments: { path: journal } }] };
      }
      return { text: results.at(-1)!.content };
    },
  });
  const marker = process.env.MCP_FS_STALL_MARKER;
  const model: Model = {
    name: scripted.name,
    respond: async (request) => {
      if (marker && !existsSync(marker) && toolResults(request.messages).length === 1) {
        writeFileSync(marker, `${process.pid}\n`);
        await new Promise<never>(() => {}); // until the test's SIGKILL
      }
      return scripted.respond(request);
    },
  };
  const scribe = new Agent({ name: 'fs-scribe', tools, checkpoint: 'tool-batch', model });
  return new Registry({ agents: [scribe] });
}
