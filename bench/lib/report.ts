import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fmt, type Figure } from './figure.js';
import type { MachineInfo } from './machine.js';

/** A section's outcome in the report. */
export interface SectionReport {
  id: string;
  title: string;
  /** Seconds the section took. */
  seconds: number;
  /** Set when the section could not run at all. */
  error?: string;
  /** Parts of the section that could not run. */
  failed?: string[];
  figures: Figure[];
  notes: string[];
  details?: Record<string, unknown>;
}

/** What `bench/results/latest.json` holds. */
export interface BenchReport {
  startedAt: string;
  quick: boolean;
  /** 1-minute load average when the run started. */
  startLoad: number;
  machine: MachineInfo;
  sections: SectionReport[];
}

function cells(f: Figure): string[] {
  const goal = f.goal ? `${f.goal}${f.met === undefined ? '' : f.met ? ' met' : ' MISSED'}` : '';
  return [f.name, f.value === null ? '-' : fmt(f.value), f.unit, String(f.n), f.spread, goal];
}

/** The figures as a Markdown table, one block per section, with notes under it. */
export function formatTable(report: BenchReport): string {
  const lines: string[] = [];
  for (const section of report.sections) {
    lines.push(`### ${section.title} (\`${section.id}\`, ${section.seconds.toFixed(0)} s)`, '');
    if (section.error) lines.push(`not run: ${section.error.slice(0, 400)}`, '');
    if (section.figures.length > 0) {
      lines.push(
        '| figure | value | unit | n | spread | goal |',
        '| --- | ---: | --- | ---: | --- | --- |',
      );
      for (const figure of section.figures) lines.push(`| ${cells(figure).join(' | ')} |`);
      lines.push('');
    }
    const notes = [
      ...section.figures.filter((f) => f.note).map((f) => `${f.name}: ${f.note}`),
      ...section.notes,
    ];
    for (const note of notes) lines.push(`- ${note}`);
    if (notes.length > 0) lines.push('');
  }
  return lines.join('\n');
}

/** Every figure of the report that carries a goal of the issue, as one Markdown table: goal, figure, value, met or missed. */
export function formatGoals(report: BenchReport): string {
  const rows = report.sections.flatMap((section) =>
    section.figures.filter((f) => f.goal).map((f) => ({ section: section.id, f })),
  );
  const lines = [
    '### Goals',
    '',
    '| section | figure | value | goal | |',
    '| --- | --- | ---: | --- | --- |',
  ];
  for (const { section, f } of rows) {
    const value =
      f.value === null ? 'not run' : `${fmt(f.value)} ${f.unit}${f.basis ? ` (${f.basis})` : ''}`;
    const verdict = f.value === null ? 'not run' : f.met ? 'met' : 'MISSED';
    lines.push(`| ${section} | ${f.name} | ${value} | ${f.goal} | ${verdict} |`);
  }
  const missed = rows.filter(({ f }) => f.value === null || !f.met).length;
  lines.push('', `${rows.length - missed} of ${rows.length} goals met.`, '');
  return lines.join('\n');
}

/** Writes the report as JSON to `path`. */
export async function writeReport(path: string, report: BenchReport): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(report, null, 2)}\n`);
}
