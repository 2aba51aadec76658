import pg from 'pg';
import { Engine, type Message } from '@cairn/engine';
import { createDb, migrate, openStore } from '@cairn/store';
import { alternate } from '../lib/alternate.js';
import { BENCH_AGENT, createRegistry } from '../lib/bench-registry.js';
import type { CommitVariant } from '../lib/commit-variants.js';
import { medianFigure, ratioFigure, type Figure } from '../lib/figure.js';
import type { Section } from '../lib/section.js';
import { walBytesOf } from '../lib/wal.js';

const ID = 'fork';
const SIZES = [10, 5000] as const;

/** A finished run's history of `size` messages: a user message, then tool turns with their results. */
function historyOf(size: number): Message[] {
  const messages: Message[] = [{ role: 'user', content: 'Research the topic in depth.' }];
  for (let turn = 1; messages.length < size - 1; turn++) {
    const id = `call_${turn}`;
    messages.push({
      role: 'assistant',
      content: null,
      toolCalls: [{ id, name: 'lookup', arguments: JSON.stringify({ item: `item-${turn}` }) }],
    });
    messages.push({
      role: 'tool',
      toolCallId: id,
      name: 'lookup',
      content: `Detail for item-${turn}: `.repeat(8),
    });
  }
  messages.push({ role: 'assistant', content: 'The findings, summarized.' });
  return messages.slice(0, size);
}

/**
 * Forks of a finished run of 10 and of 5,000 messages at its last
 * checkpoint, with an input (docs/forks-and-replay.md "Forks: time travel at a checkpoint"): the time of
 * `forkRun` (reads included) and the WAL it writes, flat in the history's
 * length because the fork shares the source's history instead of copying it.
 */
export const forkSection: Section = {
  id: ID,
  title: 'Fork at a checkpoint',
  cairn: true,
  async run({ quick, services, log }) {
    const database = await services.database(ID);
    const db = createDb(database.url);
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    try {
      await migrate(db);
      const store = openStore(db).writes;
      const engine = new Engine({ store, registry: createRegistry() });
      const sources: string[] = [];
      for (const size of SIZES) {
        const run = await store.createRun({
          entity: { kind: 'agent', name: BENCH_AGENT },
          input: 'Research the topic in depth.',
          checkpoint: 'tool-batch',
          messages: historyOf(size),
        });
        await pool.query(`UPDATE runs SET status = 'COMPLETED' WHERE run_id = $1`, [run.runId]);
        sources.push(run.runId);
      }
      const forkOf = (source: string) => () =>
        engine.forkRun(source, { input: 'Now compare them.' }).then(() => undefined);
      const variants: CommitVariant[] = SIZES.map((size, i) => ({
        name: `fork @ ${size}`,
        prepare: async () => {},
        commit: forkOf(sources[i]!),
      }));
      const rounds = quick ? 30 : 300;
      log(`alternating forks of ${SIZES.join(' and ')}-message runs, ${rounds} rounds`);
      const samples = await alternate(variants, rounds, quick ? 5 : 30);
      const wal: number[][] = SIZES.map(() => []);
      for (let round = 0; round < (quick ? 10 : 50); round++) {
        for (const [i, source] of sources.entries()) {
          const { bytes } = await walBytesOf(pool, forkOf(source));
          wal[i]!.push(bytes);
        }
      }
      const [small, large] = [0, SIZES.length - 1];
      const figures: Figure[] = [];
      SIZES.forEach((size, i) => {
        figures.push(medianFigure(ID, `fork of a ${size}-message run`, samples[i]!, 'ms'));
        figures.push(medianFigure(ID, `WAL per fork of a ${size}-message run`, wal[i]!, 'B'));
      });
      figures.push(
        ratioFigure(
          ID,
          `fork time ${SIZES[large]} / ${SIZES[small]} messages`,
          samples[large]!,
          samples[small]!,
          {
            goal: { op: '<=', bound: 1.5 },
          },
        ),
        ratioFigure(
          ID,
          `fork WAL ${SIZES[large]} / ${SIZES[small]} messages`,
          wal[large]!,
          wal[small]!,
          {
            goal: { op: '<=', bound: 1.5 },
          },
        ),
      );
      const rows = await pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM run_messages WHERE run_id NOT IN (${sources.map((_, i) => `$${i + 1}`).join(', ')})`,
        sources,
      );
      const forks = SIZES.length * (rounds + (quick ? 5 : 30) + (quick ? 10 : 50));
      return {
        figures,
        notes: [
          "each fork: the engine's forkRun at the source's last checkpoint with an input (reads of the source row, its tail and its checkpoint count, then one transaction inserting the fork's run row and its one input message)",
          `message rows written by ${forks} forks: ${rows.rows[0]?.n} (one each: its input; the shared history is read through the source, never copied)`,
        ],
      };
    } finally {
      await pool.end();
      await db.destroy();
    }
  },
};
