import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { Engine } from '@cairn/engine';
import { exportRun } from '@cairn/engine/testing';
import { createDb, migrate, openStore } from '@cairn/store';
import { medianFigure, type Figure } from '../lib/figure.js';
import { machineInfo } from '../lib/machine.js';
import { openProducerApp } from '../lib/page-route.js';
import {
  storeLongFinishedRun,
  storeWideTurnRun,
  wideTurnRegistry,
  CALLS_PER_TURN,
} from '../lib/read-fixtures.js';
import {
  baselineComparison,
  baselineReads,
  loadReadsBaseline,
  saveReadsBaseline,
  sourceRevision,
} from '../lib/reads-baseline.js';
import { FLEET_RUNS, storeRunFleet } from '../lib/run-fleet.js';
import type { Section } from '../lib/section.js';
import { msSince } from '../lib/timing.js';
import { MESSAGES_PER_PAGE } from '../../apps/producer/src/ui/message-pager.js';

const ID = 'reads';
/** Turns of the run page's run (one call each, stored in one write, as the pages section stores it). */
const LONG_RUN_TURNS = 500;
/** Messages of the run that is forked, exported and whose events are read (a checkpoint per turn). */
const BIG_RUN_MESSAGES = 5000;
/** Each read's absolute goal (issue #29): at 100,000 runs. */
const ABSOLUTE_GOAL = { op: '<=', bound: 200 } as const;

/** One read of the section: what it does, returning how many items (messages, events, bytes) it read. */
type Read = () => Promise<number>;

/**
 * The reads a run's pages and API make of its stored history (issue #29),
 * through the store's public parts (`openStore(db)`) and the producer's
 * routes, never SQL of their tables, so the same section times them before
 * and after a change of the storage layout: message pages, run views, the
 * run page route, a fork at a middle checkpoint, events after a cursor (the
 * store's read and the SSE route) and a run's export for replay, on a store
 * of 100,000 runs. Each read is the median of several timed rounds, the reads
 * alternated; with a baseline file (`--reads-baseline`, by default
 * bench/results/reads-baseline.json) each is also a ratio to its baseline,
 * and `--save-reads-baseline` writes this run's medians there.
 */
export const readsSection: Section = {
  id: ID,
  title: 'Reads of long runs at 100,000 runs',
  cairn: true,
  async run({ quick, services, log, readsBaseline }) {
    const startLoad = loadavg()[0] ?? 0;
    const baseline = readsBaseline && (await loadReadsBaseline(readsBaseline));
    const database = await services.database(ID);
    const db = createDb(database.url);
    const app = await openProducerApp(database.url, services, { pollMs: 1 });
    try {
      await migrate(db);
      log(`storing ${FLEET_RUNS} runs`);
      await storeRunFleet(db);
      const { writes, reads } = openStore(db);
      const engine = new Engine({ store: writes, registry: wideTurnRegistry(BIG_RUN_MESSAGES) });
      log(`storing a ${LONG_RUN_TURNS}-turn run and a ${BIG_RUN_MESSAGES}-message run`);
      const long = await storeLongFinishedRun(writes, LONG_RUN_TURNS);
      const big = await storeWideTurnRun(engine);
      const { total: bigMessages } = await reads.listRunMessages(big, { offset: 0, limit: 0 });
      if (bigMessages !== BIG_RUN_MESSAGES)
        throw new Error(`the big run holds ${bigMessages} messages, not ${BIG_RUN_MESSAGES}`);
      const checkpoints = (await writes.listCheckpoints(big)).length;
      const middleCheckpoint = Math.ceil(checkpoints / 2);
      const lastSeq = (await reads.listEvents(big, 0)).at(-1)?.seq ?? 0;
      const middleSeq = Math.floor(lastSeq / 2);
      // As autovacuum leaves the tables at rest: statistics and the visibility map.
      await sql`vacuum analyze`.execute(db);
      const page =
        (runId: string, offset: number): Read =>
        async () =>
          (await reads.listRunMessages(runId, { offset, limit: MESSAGES_PER_PAGE })).messages
            .length;
      const route =
        (path: string): Read =>
        async () =>
          (await app.load(path)).body.length;
      const longLastPage = Math.floor((2 * LONG_RUN_TURNS) / MESSAGES_PER_PAGE) * MESSAGES_PER_PAGE;
      const all: Record<string, Read> = {
        [`message page, first of a ${LONG_RUN_TURNS}-turn run`]: page(long, 0),
        [`message page, last of a ${LONG_RUN_TURNS}-turn run`]: page(long, longLastPage),
        [`message page, middle of a ${BIG_RUN_MESSAGES}-message run`]: page(
          big,
          BIG_RUN_MESSAGES / 2,
        ),
        [`run view with its messages (GET /v1/runs/:id), ${LONG_RUN_TURNS}-turn run`]: async () =>
          (await reads.getRunView(long))?.messages.length ?? 0,
        [`run view with its messages, ${BIG_RUN_MESSAGES}-message run`]: async () =>
          (await reads.getRunView(big))?.messages.length ?? 0,
        [`run view without messages (the run page's), ${BIG_RUN_MESSAGES}-message run`]: async () =>
          (await reads.getRunView(big, { messages: false }))?.tools.length ?? 0,
        [`GET /ui/runs/:id, ${LONG_RUN_TURNS}-turn run, whole route`]: route(`/ui/runs/${long}`),
        [`GET /ui/runs/:id, ${BIG_RUN_MESSAGES}-message run, whole route`]: route(
          `/ui/runs/${big}`,
        ),
        [`fork of a ${BIG_RUN_MESSAGES}-message run at its middle checkpoint`]: async () => {
          const fork = await engine.forkRun(big, {
            at: { checkpoint: middleCheckpoint },
            input: 'Now compare them.',
          });
          return fork.forkedFrom.message_index;
        },
        [`events after a middle cursor (listEvents), ${BIG_RUN_MESSAGES}-message run`]: async () =>
          (await reads.listEvents(big, middleSeq)).length,
        [`GET /v1/runs/:id/events?after=<middle>, whole stream, ${BIG_RUN_MESSAGES}-message run`]:
          route(`/v1/runs/${big}/events?after=${middleSeq}`),
        [`export for replay, ${LONG_RUN_TURNS}-turn run`]: async () =>
          (await exportRun(writes, long)).run.messages.length,
        [`export for replay, ${BIG_RUN_MESSAGES}-message run`]: async () =>
          (await exportRun(writes, big)).run.messages.length,
      };
      // One untimed read each (warms the code paths and connections up), which must find what it reads.
      const read: Record<string, number> = {};
      for (const [name, fn] of Object.entries(all)) {
        read[name] = await fn();
        if (read[name] === 0) throw new Error(`${name}: read nothing`);
      }
      const rounds = quick ? 7 : 30;
      log(`timing ${Object.keys(all).length} reads, ${rounds} rounds alternated`);
      const samples: Record<string, number[]> = Object.fromEntries(
        Object.keys(all).map((name) => [name, []]),
      );
      for (let round = 0; round < rounds; round++)
        for (const [name, fn] of Object.entries(all)) {
          const start = process.hrtime.bigint();
          await fn();
          samples[name]!.push(msSince(start));
        }
      const figures: Figure[] = Object.entries(samples).map(([name, ms]) =>
        medianFigure(ID, name, ms, 'ms', { goal: ABSOLUTE_GOAL, note: readNote(name, read) }),
      );
      const load = {
        start: round2(startLoad),
        end: round2(loadavg()[0] ?? 0),
      };
      const machine = await machineInfo(await services.postgresUrl());
      const notes = [
        `a store of ${FLEET_RUNS} runs; the ${LONG_RUN_TURNS}-turn run: one call a turn, its ${2 * LONG_RUN_TURNS + 1} messages, calls and events in one write; the ${BIG_RUN_MESSAGES}-message run: run by the engine with a scripted model, up to ${CALLS_PER_TURN} calls a turn, ${checkpoints} checkpoints, ${lastSeq} events; each read timed ${rounds} times after one untimed, the reads alternated round by round; the SSE route polls every 1 ms (its default 200 ms would time the wait); load average ${load.start} at start, ${load.end} at end`,
      ];
      const comparison = baseline && baselineComparison(ID, figures, baseline, { machine, quick });
      if (comparison) notes.push(comparison.note);
      else notes.push('no baseline file: no ratios (`--save-reads-baseline` writes one)');
      if (readsBaseline?.save) {
        await saveReadsBaseline(readsBaseline.path, {
          schema: 'cairn.bench-reads-baseline',
          measuredAt: new Date().toISOString(),
          source: sourceRevision(),
          quick,
          machine: { ...machine },
          load,
          reads: baselineReads(figures),
        });
        log(`wrote the baseline ${readsBaseline.path}`);
      }
      return {
        figures: [...figures, ...(comparison?.figures ?? [])],
        notes,
        details: { read, load },
      };
    } finally {
      await app.close();
      await db.destroy();
    }
  },
};

/** What the read's untimed first call read, in words. */
function readNote(name: string, read: Record<string, number>): string {
  const n = read[name]!;
  if (name.startsWith('GET')) return `${n} characters of body`;
  if (name.startsWith('fork')) return `at message ${n}, with an input`;
  if (name.startsWith('events')) return `${n} events`;
  if (name.includes('without messages')) return `${n} tool calls`;
  return `${n} messages`;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
