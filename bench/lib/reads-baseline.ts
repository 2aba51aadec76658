import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { fmt, valueFigure, type Figure, type Goal } from './figure.js';
import type { MachineInfo } from './machine.js';

/** Where the reads section's baseline lives unless `--reads-baseline` names another file. */
export const READS_BASELINE_PATH = fileURLToPath(
  new URL('../results/reads-baseline.json', import.meta.url),
);

/** The goal of a read against its baseline (issue #29): no slower than 1.1x. */
const RATIO_GOAL: Goal = { op: '<=', bound: 1.1 };

const readSchema = z.object({
  median: z.number().positive(),
  p95: z.number().positive(),
  n: z.number().int().positive(),
});

const baselineSchema = z.object({
  schema: z.literal('cairn.bench-reads-baseline'),
  measuredAt: z.string(),
  /** The commit measured, and whether the packages and apps differed from it. */
  source: z.object({ commit: z.string(), dirty: z.boolean() }),
  quick: z.boolean(),
  machine: z.object({ cpu: z.string(), cores: z.number() }).passthrough(),
  /** 1-minute load averages when the section started and ended. */
  load: z.object({ start: z.number(), end: z.number() }),
  reads: z.record(z.string(), readSchema),
});

/** The reads section's figures as a later run compares against them (`bench/results/reads-baseline.json`). */
export type ReadsBaseline = z.infer<typeof baselineSchema>;

/** Which baseline file the reads section compares with, and whether it writes its own figures there. */
export interface ReadsBaselineOption {
  path: string;
  /** Named on the command line (`--reads-baseline`): a missing file is an error, not "no baseline". */
  named: boolean;
  /** `--save-reads-baseline`: write this run's figures to `path` once compared. */
  save: boolean;
}

/** The baseline at `option.path`; undefined when there is none and none was named. Throws naming the file and field of a bad one. */
export async function loadReadsBaseline(
  option: ReadsBaselineOption,
): Promise<ReadsBaseline | undefined> {
  if (!existsSync(option.path)) {
    if (option.named) throw new Error(`--reads-baseline: no file ${option.path}`);
    return undefined;
  }
  const parsed = baselineSchema.safeParse(JSON.parse(await readFile(option.path, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(
      `reads baseline ${option.path}: ${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  return parsed.data;
}

/** Writes `baseline` to `path`. */
export async function saveReadsBaseline(path: string, baseline: ReadsBaseline): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(baseline, null, 2)}\n`);
}

/** The commit of the working tree and whether its packages or apps differ from it (another change in progress). */
export function sourceRevision(): ReadsBaseline['source'] {
  const git = (...args: string[]) =>
    execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    return {
      commit: git('rev-parse', 'HEAD'),
      dirty: git('status', '--porcelain', '--', 'packages', 'apps') !== '',
    };
  } catch {
    return { commit: 'unknown', dirty: false };
  }
}

/** The median figures of `figures` (those with statistics) as a baseline's reads. */
export function baselineReads(figures: readonly Figure[]): ReadsBaseline['reads'] {
  return Object.fromEntries(
    figures.flatMap((f) =>
      f.stats && f.value !== null
        ? [[f.name, { median: f.value, p95: f.stats.p95, n: f.stats.n }]]
        : [],
    ),
  );
}

/**
 * Each of `figures` that `baseline` also measured, as a ratio to it (goal
 * ≤ 1.1), and a note on how the two runs compare (machine, load, mode).
 */
export function baselineComparison(
  section: string,
  figures: readonly Figure[],
  baseline: ReadsBaseline,
  now: { machine: Pick<MachineInfo, 'cpu' | 'cores'>; quick: boolean },
): { figures: Figure[]; note: string } {
  const ratios = figures.flatMap((f) => {
    const before = baseline.reads[f.name];
    if (!before || f.value === null || !f.stats) return [];
    return [
      valueFigure(
        section,
        `${f.name}, vs baseline`,
        f.value / before.median,
        'x',
        Math.min(f.stats.n, before.n),
        `p95 ${fmt(f.stats.p95)} now, ${fmt(before.p95)} then`,
        { goal: RATIO_GOAL, basis: `${fmt(f.value)} / ${fmt(before.median)} ms` },
      ),
    ];
  });
  const sameMachine =
    baseline.machine.cpu === now.machine.cpu && baseline.machine.cores === now.machine.cores;
  const note =
    `baseline: ${baseline.source.commit.slice(0, 7)}${baseline.source.dirty ? ' (with uncommitted changes)' : ''}, ` +
    `measured ${baseline.measuredAt}${baseline.quick ? ' (quick)' : ''} at load ${baseline.load.start} to ${baseline.load.end}` +
    `${sameMachine ? ' on this machine' : `, ON ANOTHER MACHINE (${baseline.machine.cores} cores, ${baseline.machine.cpu}): the ratios compare machines, not code`}` +
    `${baseline.quick === now.quick ? '' : `; this run is ${now.quick ? '' : 'not '}quick`}; ${ratios.length} of its ${Object.keys(baseline.reads).length} reads measured again`;
  return { figures: ratios, note };
}
