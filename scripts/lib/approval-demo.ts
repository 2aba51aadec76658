import { FINAL_STATUSES } from '@cairn/engine';
import type { AppProcess } from '@cairn/services';
import { createDb, type RunView } from '@cairn/store';
import { sql } from 'kysely';

/** What the approval story needs from the demo's fleet. */
export interface ApprovalDemoContext {
  api: string;
  databaseUrl: string;
  workers: AppProcess[];
  banner(title: string): void;
  request<T>(method: string, path: string, body?: unknown): Promise<T>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `npm run demo -- --approval`: the ops agent's `restart_service` needs a
 * person's approval. The run pauses (its job completes, no worker holds it),
 * the worker that paused it is SIGKILLed, the approval is posted over HTTP,
 * and the other worker resumes the run and restarts the service once.
 */
export async function approvalStory(ctx: ApprovalDemoContext): Promise<void> {
  const { banner, request } = ctx;
  banner('STEP 1: ask the ops agent to restart a service (restart_service needs approval)');
  const created = await request<{ run_id: string }>('POST', '/v1/agents/ops-agent/runs', {
    input: 'restart api',
  });
  console.log(`POST /v1/agents/ops-agent/runs -> 202 ${JSON.stringify(created)}`);
  const runId = created.run_id;
  const getRun = () => request<RunView>('GET', `/v1/runs/${runId}`);

  banner('STEP 2: the run pauses: check_status ran, restart_service waits for a person');
  let run = await getRun();
  for (const deadline = Date.now() + 30_000; run.status !== 'PAUSED'; run = await getRun()) {
    if (Date.now() > deadline || FINAL_STATUSES.includes(run.status))
      throw new Error(`run is ${run.status}, expected PAUSED`);
    await sleep(100);
  }
  const action = run.pending_actions[0];
  if (!action) throw new Error('the paused run lists no pending action');
  console.log(`status: ${run.status}`);
  for (const t of run.tools) console.log(`  tool ${t.name} ${JSON.stringify(t.args)}: ${t.status}`);
  console.log(
    `pending action: ${JSON.stringify({ action_id: action.action_id, kind: action.kind, tool: action.tool, args: action.args, args_digest: action.args_digest, member_path: action.member_path })}`,
  );

  const pausedBy =
    ctx.workers.find((w) => w.name === run.attempts.at(-1)?.worker_id) ?? ctx.workers[0]!;
  const survivor = ctx.workers.find((w) => w !== pausedBy)!;
  banner(
    `STEP 3: SIGKILL ${pausedBy.name}, the worker that paused the run (a paused run holds no worker)`,
  );
  pausedBy.kill('SIGKILL');
  await pausedBy.exited;
  console.log(
    `>>> SIGKILL ${pausedBy.name} (pid ${pausedBy.proc.pid}); the run is still ${(await getRun()).status}`,
  );

  banner('STEP 4: a person approves over HTTP');
  const body = {
    decisions: [{ action_id: action.action_id, type: 'approve', args_digest: action.args_digest }],
  };
  console.log(`POST /v1/runs/${runId}/decisions ${JSON.stringify(body)}`);
  console.log(
    `-> 200 ${JSON.stringify(await request('POST', `/v1/runs/${runId}/decisions`, body))}`,
  );

  banner(`STEP 5: ${survivor.name} resumes the run and restarts the service once`);
  for (
    const deadline = Date.now() + 30_000;
    !FINAL_STATUSES.includes(run.status);
    run = await getRun()
  ) {
    if (Date.now() > deadline)
      throw new Error('the run did not finish within 30 s of the approval');
    await sleep(100);
  }
  for (const a of run.attempts)
    console.log(`  attempt ${a.epoch}: ${a.worker_id} (${a.reason}) -> ${a.outcome ?? 'open'}`);
  const restarts = await restartsIn(ctx.databaseUrl);
  console.log(`\nFinal answer:\n${run.content}`);
  console.log(
    `\nrestart_service executions in the ledger: ${restarts}. Same run_id: ${run.run_id === runId}.`,
  );
  const resumedBySurvivor = run.attempts.at(-1)?.worker_id === survivor.name;
  if (run.status !== 'COMPLETED' || restarts !== 1 || !resumedBySurvivor)
    throw new Error('the approval demo did not end as expected');
}

async function restartsIn(databaseUrl: string): Promise<number> {
  const db = createDb(databaseUrl);
  try {
    const { rows } = await sql<{
      n: string;
    }>`select count(*) as n from ops_tool_ledger where tool = 'restart_service'`.execute(db);
    return Number(rows[0]?.n ?? 0);
  } finally {
    await db.destroy();
  }
}
