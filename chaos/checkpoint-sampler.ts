import type pg from 'pg';
import { checkpointIndexes } from './chaos-db.js';

/** A run whose `last_checkpoint_at_message_index` was seen lower than before. */
export interface IndexRegression {
  runId: string;
  from: number;
  to: number;
}

/** Samples every run's checkpoint index while a scenario runs and records any that goes backwards. */
export class CheckpointSampler {
  /** Successful samples taken. */
  samples = 0;
  readonly regressions: IndexRegression[] = [];
  private readonly highest = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly db: pg.Pool) {}

  /** Samples every `intervalMs` until {@link stop}. */
  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      this.running = this.running.then(() => this.sample());
    }, intervalMs);
  }

  /** Takes one last sample and stops. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    await this.sample();
  }

  private async sample(): Promise<void> {
    let indexes: Map<string, number>;
    try {
      indexes = await checkpointIndexes(this.db);
    } catch {
      return; // Postgres restarting: skip this sample
    }
    this.samples += 1;
    for (const [runId, index] of indexes) {
      const before = this.highest.get(runId) ?? 0;
      if (index < before) this.regressions.push({ runId, from: before, to: index });
      else this.highest.set(runId, index);
    }
  }
}
