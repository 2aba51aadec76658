import { setTimeout as delay } from 'node:timers/promises';
import { CHAOS_TEAM } from './chaos-registry.js';

/** What happened to one submission. */
export interface Submission {
  seq: number;
  /** The run id of the 202 answer, if one came. */
  runId?: string;
  /** HTTP requests it took (failed ones are retried). */
  requests: number;
  /** Failed requests: status or network error. */
  errors: string[];
  acceptedAtMs?: number;
  /** For every fifth run: the input of a continue sent while it ran, and the producer's answer (202 applied, 409 refused). */
  continued?: { input: string; status: number };
}

/** Options of {@link submitRuns}. */
export interface SubmitOptions {
  baseUrl: string;
  apiKey: string;
  scenario: string;
  count: number;
  /** Submissions are spread evenly over this long. */
  spreadMs: number;
  /** A submission still failing after this long is given up. @defaultValue 180000 */
  giveUpMs?: number;
}

const REQUEST_TIMEOUT_MS = 30_000;

/**
 * POSTs `count` team runs (`checkpoint: "tool-batch"`) through the HTTP API at
 * an even pace, each tagged `metadata: { chaos_scenario, chaos_seq }`;
 * retries a submission while the producer answers 5xx or not at all.
 */
export async function submitRuns(options: SubmitOptions): Promise<Submission[]> {
  const started = Date.now();
  const pace = options.count > 1 ? options.spreadMs / (options.count - 1) : 0;
  return Promise.all(
    Array.from({ length: options.count }, async (_, seq) => {
      await delay(Math.round(seq * pace));
      return submitOne(options, seq, started);
    }),
  );
}

async function submitOne(
  options: SubmitOptions,
  seq: number,
  started: number,
): Promise<Submission> {
  const submission: Submission = { seq, requests: 0, errors: [] };
  const deadline = Date.now() + (options.giveUpMs ?? 180_000);
  const body = JSON.stringify({
    input: `Research 'chaos-${options.scenario}-${seq}'`,
    checkpoint: 'tool-batch',
    metadata: { chaos_scenario: options.scenario, chaos_seq: seq },
  });
  while (Date.now() < deadline) {
    submission.requests += 1;
    try {
      const res = await fetch(`${options.baseUrl}/v1/teams/${CHAOS_TEAM}/runs`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${options.apiKey}` },
        body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await res.text();
      if (res.status === 202) {
        submission.runId = (JSON.parse(text) as { run_id: string }).run_id;
        submission.acceptedAtMs = Date.now() - started;
        if (seq % 5 === 2)
          submission.continued = await continueWhileRunning(
            options,
            submission.runId,
            `chaos continue ${seq}`,
          );
        return submission;
      }
      submission.errors.push(`${res.status} ${text.slice(0, 200)}`);
      if (res.status < 500) return submission;
    } catch (error) {
      submission.errors.push((error as Error).message);
    }
    await delay(500);
  }
  return submission;
}

/**
 * Once the run is RUNNING (workers may be killed meanwhile), POSTs a continue
 * with `input`: its input must end up in the run's history exactly once.
 */
async function continueWhileRunning(
  options: SubmitOptions,
  runId: string,
  input: string,
): Promise<{ input: string; status: number } | undefined> {
  const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${options.apiKey}` };
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${options.baseUrl}/v1/runs/${runId}`, {
        headers,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const run = res.ok ? ((await res.json()) as { status: string }) : undefined;
      if (run && run.status !== 'PENDING' && run.status !== 'RUNNING') return undefined;
      if (run?.status === 'RUNNING') {
        const answer = await fetch(`${options.baseUrl}/v1/runs/${runId}/continue`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ input }),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        await answer.text();
        if (answer.status < 500) return { input, status: answer.status };
      }
    } catch {
      // The producer or the network is down for a moment: ask again.
    }
    await delay(200);
  }
  return undefined;
}
