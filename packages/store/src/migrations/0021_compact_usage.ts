import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * `runs.usage` stored positional, as `json` (issue #29): every checkpoint
 * rewrites it, and as a keyed `jsonb` object with a per-model object it was
 * about 300 bytes of every `runs` update's WAL. Now
 * `[inputTokens, outputTokens, totalTokens, cachedInputTokens, costMicroUsd, byModel]`,
 * `byModel` `{ model: [inputTokens, cachedInputTokens, outputTokens, costMicroUsd] }`,
 * an absent field `null`, trailing nulls left out by the writer (`usage-column.ts` owns the
 * format). Existing rows are converted in place (one rewrite of `runs`), with every position.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create function pg_temp.compact_usage(u jsonb) returns json language sql immutable as $$
    select jsonb_build_array(
      coalesce((u->>'inputTokens')::numeric, 0),
      coalesce((u->>'outputTokens')::numeric, 0),
      coalesce((u->>'totalTokens')::numeric, 0),
      u->'cachedInputTokens',
      u->'costMicroUsd',
      (select jsonb_object_agg(m.key, jsonb_build_array(
                  coalesce((m.value->>'inputTokens')::numeric, 0),
                  coalesce((m.value->>'cachedInputTokens')::numeric, 0),
                  coalesce((m.value->>'outputTokens')::numeric, 0),
                  coalesce((m.value->>'costMicroUsd')::numeric, 0)))
                  from jsonb_each(case when jsonb_typeof(u->'byModel') = 'object' then u->'byModel' end) m)
    )::json
  $$`.execute(db);
  await sql`alter table runs alter column usage drop default`.execute(db);
  await sql`alter table runs alter column usage type json using pg_temp.compact_usage(usage)`.execute(
    db,
  );
  await sql`alter table runs alter column usage set default '[0,0,0]'::json`.execute(db);
  await sql`drop function pg_temp.compact_usage(jsonb)`.execute(db);
}

/** Puts the keyed `jsonb` object back. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create function pg_temp.keyed_usage(u json) returns jsonb language sql immutable as $$
    select jsonb_strip_nulls(jsonb_build_object(
      'inputTokens', (u->>0)::numeric,
      'outputTokens', (u->>1)::numeric,
      'totalTokens', (u->>2)::numeric,
      'cachedInputTokens', (u->>3)::numeric,
      'costMicroUsd', (u->>4)::numeric,
      'byModel', (select jsonb_object_agg(m.key, jsonb_build_object(
                    'inputTokens', (m.value->>0)::numeric,
                    'cachedInputTokens', (m.value->>1)::numeric,
                    'outputTokens', (m.value->>2)::numeric,
                    'costMicroUsd', (m.value->>3)::numeric))
                    from json_each(case when json_typeof(u->5) = 'object' then u->5 end) m)))
  $$`.execute(db);
  await sql`alter table runs alter column usage drop default`.execute(db);
  await sql`alter table runs alter column usage type jsonb using pg_temp.keyed_usage(usage)`.execute(
    db,
  );
  await sql`alter table runs alter column usage set default '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}'::jsonb`.execute(
    db,
  );
  await sql`drop function pg_temp.keyed_usage(json)`.execute(db);
}
