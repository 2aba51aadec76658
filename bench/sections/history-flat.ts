import pg from 'pg';
import { createDb, migrate, openStore } from '@cairn/store';
import { alternate } from '../lib/alternate.js';
import type { CommitVariant } from '../lib/commit-variants.js';
import { fmt, medianFigure, ratioFigure, type Figure } from '../lib/figure.js';
import { blobAtHistory, cairnAtHistory, createBlobTable } from '../lib/history-variants.js';
import type { Section } from '../lib/section.js';
import { median } from '../lib/stats.js';
import { walPerCommit } from '../lib/commit-breakdown.js';

const ID = 'history';
const SIZES = [10, 100, 1000, 5000] as const;

/** Section 2: the same commit at 10..5,000 messages of history, beside a whole-history jsonb rewrite. */
export const historyFlatSection: Section = {
  id: ID,
  title: 'Flat in history',
  cairn: true,
  async run({ quick, services, log }) {
    const database = await services.database(ID);
    const db = createDb(database.url);
    const pool = new pg.Pool({ connectionString: database.url, max: 4 });
    try {
      await migrate(db);
      await createBlobTable(pool);
      const store = openStore(db).writes;
      const cairn: CommitVariant[] = [];
      const blob: CommitVariant[] = [];
      for (const size of SIZES) {
        cairn.push(await cairnAtHistory(store, pool, size));
        blob.push(await blobAtHistory(pool, size));
      }
      const rounds = quick ? 20 : 200;
      log(`alternating ${SIZES.length} history sizes x 2 stores, ${rounds} rounds`);
      const samples = await alternate([...cairn, ...blob], rounds, quick ? 3 : 20);
      const wal = await walPerCommit(database.url, [...cairn, ...blob], quick ? 8 : 40);
      const cairnMs = samples.slice(0, SIZES.length);
      const blobMs = samples.slice(SIZES.length);
      const last = SIZES.length - 1;
      const figures: Figure[] = [];
      SIZES.forEach((size, i) => {
        figures.push(medianFigure(ID, `cairn commit @ ${size} messages`, cairnMs[i]!, 'ms'));
        figures.push(medianFigure(ID, `session-blob rewrite @ ${size} messages`, blobMs[i]!, 'ms'));
      });
      figures.push(
        ratioFigure(
          ID,
          `cairn ${SIZES[last]} / ${SIZES[0]} messages`,
          cairnMs[last]!,
          cairnMs[0]!,
          {
            goal: { op: '<=', bound: 1.1 },
          },
        ),
        ratioFigure(
          ID,
          `session-blob ${SIZES[last]} / ${SIZES[0]} messages`,
          blobMs[last]!,
          blobMs[0]!,
        ),
      );
      SIZES.forEach((size, i) => {
        figures.push(medianFigure(ID, `WAL per cairn commit @ ${size}`, wal[i]!, 'B'));
        figures.push(
          medianFigure(ID, `WAL per session-blob rewrite @ ${size}`, wal[SIZES.length + i]!, 'B'),
        );
      });
      const walLine = SIZES.map(
        (s, i) => `${s}: ${fmt(median(wal[i]!))} vs ${fmt(median(wal[SIZES.length + i]!))}`,
      ).join('; ');
      return {
        figures,
        notes: [
          'each cairn commit runs at exactly its history length: the rows it appended are deleted (untimed) before the next round',
          `WAL bytes per commit, cairn vs session-blob, by history length: ${walLine}`,
        ],
      };
    } finally {
      await pool.end();
      await db.destroy();
    }
  },
};
