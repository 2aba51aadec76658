import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Engine } from '@cairn/engine';
import { createRegistry } from '@cairn/research-team';
import { createDb, migrate, openStore, type RunView, type StoreReads } from '@cairn/store';

/** Where the worker is killed: after the team's first checkpoint, or inside the member's run. */
export type KillPoint = 'team' | 'member';

/** What the flow saw, for printing and for tests. */
export interface SeedCrashRecoveryResult {
  crashed: RunView;
  resumed: RunView;
  /** One entry per tool execution, across both processes: `[tool, idempotencyKey]`. */
  ledger: [string, string][];
}

const CHILD = fileURLToPath(new URL('./execute-run.ts', import.meta.url));

/**
 * The seed's flow in process: a child process runs the research team with
 * `checkpoint: "tool-batch"`; the parent waits for the checkpoint named by
 * `killPoint`, SIGKILLs the child, then continues the run itself.
 */
export async function runSeedCrashRecovery(options: {
  databaseUrl: string;
  killPoint: KillPoint;
  log?: (line: string) => void;
}): Promise<SeedCrashRecoveryResult> {
  const log = options.log ?? (() => undefined);
  const ledgerFile = join(tmpdir(), `cairn-ledger-${process.pid}-${Date.now()}.tsv`);
  process.env.CAIRN_TOOL_LEDGER = ledgerFile;
  const db = createDb(options.databaseUrl);
  try {
    await migrate(db);
    const { writes, reads } = openStore(db);
    const engine = new Engine({
      store: writes,
      registry: createRegistry(),
      workerId: `parent:${process.pid}`,
    });
    const run = await engine.createRun({
      entity: { kind: 'team', name: 'research-team' },
      input: "Research the topic 'cairn checkpointing'.",
      sessionId: 'team-crash-demo-session',
      checkpoint: 'tool-batch',
    });

    log(`STEP 1: start the team run ${run.runId} in a worker subprocess, then SIGKILL it`);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=source', CHILD, run.runId],
      {
        env: { ...process.env, DATABASE_URL: options.databaseUrl },
        stdio: 'ignore',
      },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await waitForCheckpoint(reads, run.runId, options.killPoint, () => child.exitCode !== null);
    child.kill('SIGKILL');
    await exited;
    log(
      `>>> SIGKILL the worker subprocess (pid ${child.pid}) at the ${options.killPoint} checkpoint`,
    );

    const crashed = (await reads.getRunView(run.runId))!;
    log('STEP 2: the partial team run survived the crash');
    log(describe(crashed));

    log('STEP 3: continue resumes the team run from the last checkpoint');
    const decision = await engine.continueRun(run.runId);
    if (decision.action !== 'resume')
      throw new Error(`expected a resumable run, got ${decision.action}`);
    await engine.execute(run.runId, { reason: 'continue' });
    const resumed = (await reads.getRunView(run.runId))!;
    log(describe(resumed));
    log(`Final answer:\n${resumed.content}`);

    const ledger = readFileSync(ledgerFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t') as [string, string]);
    return { crashed, resumed, ledger };
  } finally {
    rmSync(ledgerFile, { force: true });
    await db.destroy();
  }
}

async function waitForCheckpoint(
  store: Pick<StoreReads, 'getRun' | 'listChildRuns'>,
  runId: string,
  killPoint: KillPoint,
  childGone: () => boolean,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (childGone()) throw new Error('the worker subprocess ended before the checkpoint');
    const team = await store.getRun(runId);
    // The team's delegation result is committed (index 3; index 2 is the delegation turn, stored before delegating).
    if (
      killPoint === 'team' &&
      team?.status === 'RUNNING' &&
      team.lastCheckpointAtMessageIndex >= 3
    )
      return;
    if (killPoint === 'member') {
      const [member] = await store.listChildRuns(runId);
      // Search and the first fetch committed: the researcher is between fetches.
      if (member?.status === 'RUNNING' && member.lastCheckpointAtMessageIndex >= 5) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no ${killPoint} checkpoint within 60 s`);
}

/** The seed's printout of a run. */
export function describe(run: RunView): string {
  const member = run.member_runs[0];
  return [
    `  run_id:                         ${run.run_id}`,
    `  status:                         ${run.status}`,
    `  tool batches in DB:             ${new Set(run.tools.map((t) => t.batch)).size}`,
    `  message count:                  ${run.messages.length}`,
    `  last_checkpoint_at_message_idx: ${run.last_checkpoint_at_message_index}`,
    `  attempts:                       ${run.attempts.map((a) => `${a.reason}@${a.worker_id}`).join(', ')}`,
    member
      ? `  member ${member.entity.name}: ${member.status}, ${member.tools.length} tool calls, checkpoint idx ${member.last_checkpoint_at_message_index}`
      : '  member: not started',
  ].join('\n');
}
