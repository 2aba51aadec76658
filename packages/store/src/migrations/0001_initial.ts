import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/** Creates sessions, runs, run_messages, tool_calls, run_attempts and run_events. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sessions')
    .addColumn('session_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('runs')
    .addColumn('run_id', 'text', (c) => c.primaryKey())
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.session_id'))
    .addColumn('user_id', 'text')
    .addColumn('parent_run_id', 'text', (c) => c.references('runs.run_id'))
    .addColumn('parent_tool_call_id', 'text')
    .addColumn('entity_kind', 'text', (c) =>
      c.notNull().check(sql`entity_kind in ('agent', 'team')`),
    )
    .addColumn('entity_name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .check(sql`status in ('PENDING', 'RUNNING', 'COMPLETED', 'ERROR', 'CANCELLED', 'PAUSED')`),
    )
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('content', 'text')
    .addColumn('checkpoint', 'text', (c) =>
      c.notNull().check(sql`checkpoint in ('run', 'tool-batch', 'tool-call')`),
    )
    .addColumn('last_checkpoint_at_message_index', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('epoch', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'jsonb')
    .addColumn('usage', 'jsonb', (c) =>
      c.notNull().defaultTo(sql`'{"inputTokens":0,"outputTokens":0,"totalTokens":0}'::jsonb`),
    )
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('cancel_requested_at', 'timestamptz')
    .addColumn('schema_version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('runs_parent_run_id_idx')
    .on('runs')
    .columns(['parent_run_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('runs_session_id_idx')
    .on('runs')
    .columns(['session_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('runs_status_idx')
    .on('runs')
    .columns(['status', 'updated_at'])
    .execute();

  await db.schema
    .createTable('run_messages')
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.run_id').onDelete('cascade'))
    .addColumn('idx', 'integer', (c) => c.notNull())
    .addColumn('message', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('run_messages_pkey', ['run_id', 'idx'])
    .execute();

  await db.schema
    .createTable('tool_calls')
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.run_id').onDelete('cascade'))
    .addColumn('tool_call_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('args', 'jsonb', (c) => c.notNull())
    .addColumn('result', 'text')
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('running', 'completed', 'error')`),
    )
    .addColumn('batch', 'integer', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('child_run_id', 'text')
    .addColumn('epoch', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ended_at', 'timestamptz')
    .addPrimaryKeyConstraint('tool_calls_pkey', ['run_id', 'tool_call_id'])
    .execute();

  await db.schema
    .createTable('run_attempts')
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.run_id').onDelete('cascade'))
    .addColumn('epoch', 'integer', (c) => c.notNull())
    .addColumn('worker_id', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('ended_at', 'timestamptz')
    .addColumn('outcome', 'text')
    .addPrimaryKeyConstraint('run_attempts_pkey', ['run_id', 'epoch'])
    .execute();

  await db.schema
    .createTable('run_events')
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.run_id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('run_events_pkey', ['run_id', 'seq'])
    .execute();
}

/** Drops every table `up` created. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'run_events',
    'run_attempts',
    'tool_calls',
    'run_messages',
    'runs',
    'sessions',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
