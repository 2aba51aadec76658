/**
 * `npm run replay -- <run_id>`: replays a stored run (DATABASE_URL) against
 * the current registry (`CAIRN_REGISTRY`, as a worker loads it) with no model
 * and no tool, printing `replayed <n> turns, <m> tool calls: ok` (exit 0) or
 * the first divergence (exit 1). `npm run replay -- run.json` replays a run
 * file with no database; `npm run replay -- --export <run_id> --out run.json`
 * writes one. Bad usage, a bad file or an unknown run exits 2. Whatever it
 * prints of a run (names, messages, a bad file's values) shows control
 * characters as escapes, never raw.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { CairnError, type Registry } from '@cairn/engine';
import {
  describeReplay,
  exportRun,
  printable,
  printableJson,
  readRunFile,
  replayRun,
  type RunExport,
  type RunExportSource,
} from '@cairn/engine/testing';

const USAGE =
  'usage: npm run replay -- <run_id> | <run.json> | --export <run_id> [--out <run.json>]';

/** A problem with what was asked (usage, the configuration): exit 2, as every failure to replay. */
class UsageProblem extends Error {
  constructor(
    message: string,
    /** Print the usage line after the message. */
    readonly showUsage = false,
  ) {
    super(message);
  }
}

async function main(): Promise<number> {
  let values: { export?: string; out?: string; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      options: {
        export: { type: 'string' },
        out: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      allowPositionals: true,
    }));
  } catch (error) {
    throw new UsageProblem((error as Error).message, true);
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.export !== undefined) {
    if (positionals.length > 0) throw new UsageProblem('--export takes no run file', true);
    const file = await withStore((store) => exportRun(store, values.export!));
    const json = `${printableJson(file)}\n`;
    if (values.out === undefined) process.stdout.write(json);
    else {
      await writeFile(values.out, json);
      console.log(
        printable(
          `wrote run ${file.run.run_id} and ${file.members.length} member run(s) to ${values.out}`,
        ),
      );
    }
    return 0;
  }
  const [target, ...rest] = positionals;
  if (target === undefined || rest.length > 0 || values.out !== undefined)
    throw new UsageProblem('give one run id or run file', true);
  const run = isRunFile(target)
    ? await readRunFile(target)
    : await withStore((store) => exportRun(store, target));
  const result = await replayRun(await currentRegistry(), run);
  console.log(describeReplay(result, run.run.run_id));
  return result.ok ? 0 : 1;
}

/** Where an unexpected error was thrown: its stack's frames (its message is printed apart), each line escaped. */
function stackFrames(error: unknown): string {
  const stack = (error as Error | undefined)?.stack ?? '';
  const frames = stack.indexOf('\n    at ');
  return frames < 0
    ? ''
    : stack
        .slice(frames + 1)
        .split('\n')
        .map(printable)
        .join('\n');
}

/** A path to a run file, not a run id: it exists, or it names a `.json` file. */
function isRunFile(target: string): boolean {
  return target.endsWith('.json') || existsSync(target);
}

// The runtime and the store are imported only when needed: a file's replay opens no database.

/** The registry a worker would serve: `CAIRN_REGISTRY`, else the research team. */
async function currentRegistry(): Promise<Registry> {
  const { DEFAULT_REGISTRY_MODULE, loadRegistry } = await import('@cairn/runtime');
  return loadRegistry(process.env.CAIRN_REGISTRY?.trim() || DEFAULT_REGISTRY_MODULE);
}

async function withStore(read: (store: RunExportSource) => Promise<RunExport>): Promise<RunExport> {
  const url = process.env.DATABASE_URL;
  if (!url)
    throw new UsageProblem(
      'DATABASE_URL is not set: set it to the Postgres URL of the store, or replay a run file (npm run replay -- run.json)',
    );
  const { createDb, openStore } = await import('@cairn/store');
  const db = createDb(url, { max: 2 });
  try {
    return await read(openStore(db).writes);
  } finally {
    await db.destroy();
  }
}

try {
  process.exitCode = await main();
} catch (error) {
  // Exit 1 is kept for a divergence: a bad file, an unknown run or an unreachable database is 2.
  const known = error instanceof UsageProblem || error instanceof CairnError;
  console.error(`replay: ${printable(known ? error.message : String(error))}`);
  if (error instanceof UsageProblem && error.showUsage) console.error(USAGE);
  if (!known) console.error(stackFrames(error));
  process.exitCode = 2;
}
