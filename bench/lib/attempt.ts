import { notRunFigure, type Figure } from './figure.js';

/** Collects a section's figures, turning a failed part into not-run figures instead of losing the rest. */
export class FigureSink {
  readonly figures: Figure[] = [];
  readonly notes: string[] = [];
  readonly failed: string[] = [];

  constructor(
    private readonly section: string,
    private readonly log: (message: string) => void,
  ) {}

  /** Runs one part; on failure records `names` as not run with the error's message. */
  async part(names: readonly string[], work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.log(
        `part failed (${names.join(', ')}): ${error instanceof Error ? (error.stack ?? reason) : reason}`,
      );
      this.failed.push(`${names.join(', ')}: ${reason.slice(0, 300)}`);
      for (const name of names)
        this.figures.push(notRunFigure(this.section, name, reason.slice(0, 300)));
    }
  }
}
