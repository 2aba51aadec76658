/**
 * The least WAL one durable checkpoint of the typical batch can write
 * (docs/benchmarks.md, "Checkpoint commit vs the limit"): its payload as Postgres
 * would store it (pglz-compressed when over the ~2 KB at which Postgres
 * compresses) plus the fixed cost of one durable row.
 */
import type pg from 'pg';
import { typicalDelta, typicalEvents } from './checkpoint-fixture.js';

/**
 * WAL of one durable write besides its payload: one heap insert's record
 * header and key columns (~100 B), a primary-key entry (104 B), the fence on
 * the run (~54 B) and the commit record (34 B).
 */
const DURABLE_WRITE_OVERHEAD = 290;

/** The floor of one checkpoint and what it is made of. */
export interface CheckpointFloor {
  /** Bytes of the payload as JSON text: messages, compact call state, events. */
  textBytes: number;
  /** Bytes Postgres stores for it as one text value (pg_column_size). */
  storedBytes: number;
  /** Its compression as stored (`pglz`), or null when Postgres stored it as is. */
  compression: string | null;
  /** storedBytes + {@link DURABLE_WRITE_OVERHEAD}. */
  floorBytes: number;
}

/**
 * What a checkpoint of the typical batch must make durable, as one JSON text:
 * its messages, the state of its calls the messages lack (status, batch, times,
 * epoch, child run, idempotency key) and the batch's events.
 */
function typicalPayload(): string {
  const run = { runId: '00000000-0000-7000-8000-000000000000', epoch: 1 };
  const delta = typicalDelta(1);
  const calls = delta.toolCalls.map((c) => ({
    id: c.toolCallId,
    status: c.status,
    batch: c.batch,
    epoch: run.epoch,
    childRunId: c.childRunId,
    idempotencyKey: c.idempotencyKey,
    startedAt: c.startedAt,
    endedAt: c.endedAt,
  }));
  return JSON.stringify({ messages: delta.messages, calls, events: typicalEvents(run, 1) });
}

/** Stores the typical payload as text in a scratch table on `client` (pglz) and reads back its stored size. */
export async function checkpointFloor(client: pg.Client): Promise<CheckpointFloor> {
  const payload = typicalPayload();
  await client.query("SET default_toast_compression = 'pglz'");
  await client.query('CREATE TEMP TABLE IF NOT EXISTS floor_payload (body text NOT NULL)');
  await client.query('TRUNCATE floor_payload');
  await client.query('INSERT INTO floor_payload (body) VALUES ($1)', [payload]);
  const { rows } = await client.query<{ stored: number; compression: string | null }>(
    'SELECT pg_column_size(body) AS stored, pg_column_compression(body) AS compression FROM floor_payload',
  );
  await client.query('DROP TABLE floor_payload');
  const storedBytes = Number(rows[0]?.stored);
  return {
    textBytes: Buffer.byteLength(payload),
    storedBytes,
    compression: rows[0]?.compression ?? null,
    floorBytes: storedBytes + DURABLE_WRITE_OVERHEAD,
  };
}
