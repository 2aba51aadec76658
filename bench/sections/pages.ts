import { sql } from 'kysely';
import { createDb, migrate, PostgresCheckpointStore } from '@cairn/store';
import { medianFigure, valueFigure, type Figure } from '../lib/figure.js';
import type { Section } from '../lib/section.js';
import { msSince } from '../lib/timing.js';

const ID = 'pages';
const RUNS = 100_000;
const TENANTS = ['acme', 'globex', 'initech', 'umbrella'] as const;

/**
 * The run list page's reads on a store of 100,000 runs (DESIGN "Run pages"):
 * the fleet overview (every run's, and one tenant's) and the list's first
 * page, each timed, and whether any of them scanned the runs table.
 */
export const pagesSection: Section = {
  id: ID,
  title: 'Run list page at 100,000 runs',
  cairn: true,
  async run({ quick, services, log }) {
    const database = await services.database(ID);
    const db = createDb(database.url);
    try {
      await migrate(db);
      log(`storing ${RUNS} runs over 30 days, ${TENANTS.length} tenants`);
      await sql`
        insert into sessions (session_id, tenant_id)
        select 's' || g, (array['acme','globex','initech','umbrella'])[1 + g % 4]
          from generate_series(0, ${RUNS / 100 - 1}) g`.execute(db);
      // Mostly finished, a few live ones, ~1 in 700 created in the last hour.
      await sql`
        insert into runs (run_id, session_id, tenant_id, entity_kind, entity_name, status, input,
                          checkpoint, waiting, created_at, updated_at)
        select 'r' || g, 's' || (g / 100), (array['acme','globex','initech','umbrella'])[1 + (g / 100) % 4],
               'agent', 'researcher',
               (case when g % 100 < 90 then 'COMPLETED' when g % 100 < 95 then 'ERROR'
                     when g % 100 < 98 then 'RUNNING' else 'PAUSED' end),
               'x', 'tool-batch',
               (case when g % 300 = 2 then jsonb_build_object('for', 'capacity', 'model', 'openai-chat:gpt-x', 'until', now()) end),
               now() - (g * interval '26 seconds'),
               now() - (g * interval '26 seconds') + interval '20 seconds'
          from generate_series(0, ${RUNS - 1}) g`.execute(db);
      await sql`
        insert into tenant_day_spend (tenant_id, day, cost_micro_usd)
        select t, (now() at time zone 'utc')::date, 1000000
          from unnest(array['acme','globex','initech','umbrella']) t`.execute(db);
      // As autovacuum leaves a table at rest: statistics and the visibility map (index-only scans).
      await sql`vacuum analyze`.execute(db);
      const store = new PostgresCheckpointStore(db);
      const reads = {
        'fleet overview, every run': () => store.readFleetOverview({}),
        "fleet overview, one tenant's": () => store.readFleetOverview({ tenantId: 'acme' }),
        'run list, first page': () => store.listRuns({ limit: 50 }),
        'run list, first page of ERROR': () => store.listRuns({ statuses: ['ERROR'], limit: 50 }),
        "run list, one tenant's first page": () => store.listRuns({ tenantId: 'acme', limit: 50 }),
      };
      const rounds = quick ? 10 : 50;
      const seqScans = async () => {
        // Statistics reach the view once the backends that made them flush (about every second).
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const { rows } = await sql<{ n: string }>`
          select seq_scan as n from pg_stat_user_tables where relname = 'runs'`.execute(db);
        return Number(rows[0]?.n ?? 0);
      };
      const figures: Figure[] = [];
      const scansBefore = await seqScans();
      for (const [name, read] of Object.entries(reads)) {
        await read();
        const samples: number[] = [];
        for (let i = 0; i < rounds; i++) {
          const start = process.hrtime.bigint();
          await read();
          samples.push(msSince(start));
        }
        figures.push(medianFigure(ID, name, samples, 'ms', { goal: { op: '<=', bound: 200 } }));
      }
      const scans = (await seqScans()) - scansBefore;
      figures.push(
        valueFigure(
          ID,
          'sequential scans of runs during the reads',
          scans,
          'scans',
          1,
          'pg_stat_user_tables',
          {
            goal: { op: '<=', bound: 0 },
          },
        ),
      );
      return {
        figures,
        notes: [
          `${RUNS} top-level runs, 90% COMPLETED, 5% ERROR, 3% RUNNING (1 in 300 parked for capacity), 2% PAUSED, created every 26 s back over 30 days, ${TENANTS.length} tenants; each read timed ${rounds} times after one untimed`,
        ],
      };
    } finally {
      await db.destroy();
    }
  },
};
