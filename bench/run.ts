/**
 * `npm run bench [-- --quick] [-- --only checkpoint,history] [-- --out file.json]`:
 * runs the benchmark sections, prints a Markdown table and writes
 * bench/results/latest.json (or `--out`). The reads section compares with
 * bench/results/reads-baseline.json (or `--reads-baseline <file>`) when there
 * is one, and `--save-reads-baseline` writes its figures there.
 * Never asserts a figure; exits 1 only when one of Cairn's own sections could not run.
 */
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { machineInfo } from './lib/machine.js';
import {
  formatGoals,
  formatTable,
  writeReport,
  type BenchReport,
  type SectionReport,
} from './lib/report.js';
import { READS_BASELINE_PATH, type ReadsBaselineOption } from './lib/reads-baseline.js';
import type { Section } from './lib/section.js';
import { BenchServices } from './lib/services.js';
import { capacitySection } from './sections/capacity.js';
import { checkpointCommitSection } from './sections/checkpoint-commit.js';
import { deadlinesSection } from './sections/deadlines.js';
import { forkSection } from './sections/fork.js';
import { historyFlatSection } from './sections/history-flat.js';
import { livenessSection } from './sections/liveness.js';
import { pagesSection } from './sections/pages.js';
import { readsSection } from './sections/reads.js';
import { mcpSection } from './sections/mcp.js';
import { memorySection } from './sections/memory.js';
import { peersSection } from './sections/peers.js';
import { recoverySection } from './sections/recovery.js';
import { replaySection } from './sections/replay.js';
import { spendSection } from './sections/spend.js';
import { throughputSection } from './sections/throughput.js';

const SECTIONS: readonly Section[] = [
  checkpointCommitSection,
  historyFlatSection,
  memorySection,
  peersSection,
  throughputSection,
  recoverySection,
  livenessSection,
  capacitySection,
  deadlinesSection,
  replaySection,
  spendSection,
  forkSection,
  pagesSection,
  readsSection,
  mcpSection,
];

const RESULTS_PATH = fileURLToPath(new URL('./results/latest.json', import.meta.url));

function usage(): string {
  return `usage: npm run bench -- [--quick] [--only <${SECTIONS.map((s) => s.id).join('|')}>[,...]] [--out <results.json>] [--reads-baseline <file>] [--save-reads-baseline]`;
}

function parseCli(): {
  quick: boolean;
  sections: Section[];
  out: string;
  readsBaseline: ReadsBaselineOption;
} {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string', multiple: true },
      out: { type: 'string' },
      'reads-baseline': { type: 'string' },
      'save-reads-baseline': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage());
    process.exit(0);
  }
  const wanted = (values.only ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  const unknown = wanted.filter((id) => !SECTIONS.some((s) => s.id === id));
  if (unknown.length > 0) throw new Error(`unknown section ${unknown.join(', ')}; ${usage()}`);
  return {
    quick: values.quick,
    sections: wanted.length ? SECTIONS.filter((s) => wanted.includes(s.id)) : [...SECTIONS],
    out: values.out ?? RESULTS_PATH,
    readsBaseline: {
      path: values['reads-baseline'] ?? READS_BASELINE_PATH,
      named: values['reads-baseline'] !== undefined,
      save: values['save-reads-baseline'],
    },
  };
}

async function runSection(
  section: Section,
  quick: boolean,
  services: BenchServices,
  readsBaseline: ReadsBaselineOption,
): Promise<SectionReport> {
  const started = Date.now();
  const log = (message: string) =>
    console.error(
      `[bench ${section.id} +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`,
    );
  log(`start${quick ? ' (quick)' : ''}`);
  try {
    const result = await section.run({ quick, services, log, readsBaseline });
    return {
      id: section.id,
      title: section.title,
      seconds: (Date.now() - started) / 1000,
      ...result,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log(`could not run: ${error instanceof Error ? (error.stack ?? message) : message}`);
    return {
      id: section.id,
      title: section.title,
      seconds: (Date.now() - started) / 1000,
      error: message,
      figures: [],
      notes: [],
    };
  }
}

async function main(): Promise<number> {
  const { quick, sections, out, readsBaseline } = parseCli();
  const services = new BenchServices();
  const startedAt = new Date().toISOString();
  const startLoad = Math.round((loadavg()[0] ?? 0) * 100) / 100;
  const reports: SectionReport[] = [];
  try {
    for (const section of sections)
      reports.push(await runSection(section, quick, services, readsBaseline));
    const machine = await machineInfo(await services.postgresUrl().catch(() => undefined));
    const report: BenchReport = { startedAt, quick, startLoad, machine, sections: reports };
    console.log(`\n## Cairn benchmark${quick ? ' (quick)' : ''}, ${startedAt}\n`);
    console.log(
      `Machine: ${machine.cores} cores (${machine.cpu}), ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}, ` +
        `Postgres ${machine.postgres ?? '?'}, Redis ${machine.redis ?? 'none'}; load average ${startLoad} at start, ${machine.loadAverage} at end\n`,
    );
    console.log(formatTable(report));
    console.log(formatGoals(report));
    await writeReport(out, report);
    console.error(`[bench] wrote ${out}`);
  } finally {
    await services.stop();
  }
  const failed = reports.filter(
    (r) => r.failed?.length || (r.error && sections.find((s) => s.id === r.id)?.cairn),
  );
  return failed.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
