import type { Figure } from './figure.js';
import type { ReadsBaselineOption } from './reads-baseline.js';
import type { BenchServices } from './services.js';

/** What every section receives. */
export interface SectionContext {
  /** Fewer rounds (`--quick`). */
  quick: boolean;
  services: BenchServices;
  /** Progress line on stderr. */
  log(message: string): void;
  /** The reads section's baseline file (`--reads-baseline`, `--save-reads-baseline`). */
  readsBaseline?: ReadsBaselineOption;
}

/** What a section measured. */
export interface SectionResult {
  figures: Figure[];
  /** Findings in words: breakdowns, caveats, what limits a figure. */
  notes: string[];
  /** Raw numbers behind the figures, kept in the JSON. */
  details?: Record<string, unknown>;
  /** Parts of Cairn's own figures that could not run (each also has a not-run figure); makes the exit code 1. */
  failed?: string[];
}

/** One independently runnable part of the benchmark (`--only <id>`). */
export interface Section {
  id: string;
  title: string;
  /** Whether a failure means Cairn's own figures could not run (exit code 1); peers are not. */
  cairn: boolean;
  run(context: SectionContext): Promise<SectionResult>;
}
