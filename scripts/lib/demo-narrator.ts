import { ownEntityName } from '@cairn/engine';
import type { RunView } from '@cairn/store';

/** Prints what changed in a run tree since the last look, one line per change, with the elapsed time. */
export class DemoNarrator {
  private readonly seen = new Set<string>();
  private readonly startedAt = Date.now();

  constructor(private readonly print: (line: string) => void = (line) => console.log(line)) {}

  /** Seconds since the narrator was created, for log lines. */
  elapsed(): string {
    return `${((Date.now() - this.startedAt) / 1000).toFixed(1).padStart(5)}s`;
  }

  /** Prints `line` stamped with the elapsed time. */
  say(line: string): void {
    this.print(`[${this.elapsed()}] ${line}`);
  }

  /** Narrates the new attempts, tool calls, checkpoints and statuses of `run` and its members. */
  observe(run: RunView, label = run.entity.name): void {
    for (const attempt of run.attempts) {
      this.once(`${run.run_id}:attempt:${attempt.epoch}`, () =>
        this.say(
          `${label}: claimed by ${attempt.worker_id} (attempt ${attempt.epoch}, reason ${attempt.reason})`,
        ),
      );
    }
    for (const tool of run.tools) {
      if (tool.status === 'running') continue;
      this.once(`${run.run_id}:tool:${tool.tool_call_id}`, () =>
        this.say(
          `${label}: tool batch ${tool.batch} ${tool.name}(${short(tool.args)}) -> ${short(tool.result)}`,
        ),
      );
    }
    if (run.status === 'RUNNING' && run.last_checkpoint_at_message_index > 0) {
      this.once(`${run.run_id}:checkpoint:${run.last_checkpoint_at_message_index}`, () =>
        this.say(
          `${label}: RUNNING checkpoint committed, last_checkpoint_at_message_index=${run.last_checkpoint_at_message_index}`,
        ),
      );
    }
    this.once(`${run.run_id}:status:${run.status}`, () => this.say(`${label}: ${run.status}`));
    for (const member of run.member_runs)
      this.observe(member, `  ${label} > ${ownEntityName(member.entity.name)}`);
  }

  private once(key: string, speak: () => void): void {
    if (this.seen.has(key)) return;
    this.seen.add(key);
    speak();
  }
}

function short(value: unknown): string {
  const text = (typeof value === 'string' ? value : JSON.stringify(value)).replace(/\s+/g, ' ');
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The seed's printout of a run: id, status, batches, messages, checkpoint index, attempts. */
export function describeRun(run: RunView): string {
  const batches = (r: RunView) => new Set(r.tools.map((t) => t.batch)).size;
  const lines = [
    `  run_id:                          ${run.run_id}`,
    `  status:                          ${run.status}`,
    `  tool batches in DB:              ${batches(run)}`,
    `  message count:                   ${run.messages.length}`,
    `  last_checkpoint_at_message_index: ${run.last_checkpoint_at_message_index}`,
    `  attempts:                        ${run.attempts.map((a) => `#${a.epoch} ${a.reason} on ${a.worker_id}`).join(', ')}`,
  ];
  for (const member of run.member_runs) {
    lines.push(
      `  member ${member.entity.name}: ${member.status}, ${batches(member)} tool batches, ${member.messages.length} messages, ` +
        `attempts: ${member.attempts.map((a) => `#${a.epoch} ${a.reason} on ${a.worker_id}`).join(', ')}`,
    );
  }
  return lines.join('\n');
}
