import pg from 'pg';
import {
  ChannelListeners,
  liveChannel,
  type LiveEvent,
  type LivePublisher,
  type LiveSubscriber,
} from './live-event.js';
import { TickBatch } from './tick-batch.js';

/** Postgres' NOTIFY payload limit is 8000 bytes; larger events are dropped (the stored stream has them once committed). */
const MAX_PAYLOAD_BYTES = 7999;

/**
 * Live events over LISTEN/NOTIFY (the PostgreSQL backend). Events published
 * in the same tick go out in one statement; nothing is written to a table.
 */
export class PostgresLivePublisher implements LivePublisher {
  private readonly pool: pg.Pool;
  private readonly batch = new TickBatch((events) => this.send(events));

  constructor(
    databaseUrl: string,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    this.pool.on('error', onError);
  }

  publish(event: LiveEvent): void {
    this.batch.push(event);
  }

  async close(): Promise<void> {
    await this.batch.flushed();
    await this.pool.end();
  }

  private async send(events: readonly LiveEvent[]): Promise<void> {
    const channels: string[] = [];
    const payloads: string[] = [];
    for (const event of events) {
      const payload = JSON.stringify(event);
      if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) continue;
      channels.push(liveChannel(event.runId));
      payloads.push(payload);
    }
    if (channels.length === 0) return;
    try {
      await this.pool.query(
        'select pg_notify(n.c, n.p) from unnest($1::text[], $2::text[]) with ordinality as n(c, p, o) order by n.o',
        [channels, payloads],
      );
    } catch (error) {
      this.onError(error);
    }
  }
}

/** Follows live channels with LISTEN on one dedicated connection. */
export class PostgresLiveSubscriber implements LiveSubscriber {
  private readonly client: pg.Client;
  private readonly connected: Promise<void>;
  private readonly listeners = new ChannelListeners();

  constructor(databaseUrl: string) {
    this.client = new pg.Client({ connectionString: databaseUrl });
    this.client.on('error', () => undefined);
    this.client.on('notification', (message) =>
      this.listeners.dispatch(message.channel, message.payload),
    );
    this.connected = this.client.connect().then(() => undefined);
    this.connected.catch(() => undefined);
  }

  async subscribe(
    runId: string,
    listener: (event: LiveEvent) => void,
  ): Promise<() => Promise<void>> {
    await this.connected;
    const channel = liveChannel(runId);
    const name = this.client.escapeIdentifier(channel);
    if (this.listeners.add(channel, listener)) await this.client.query(`LISTEN ${name}`);
    return async () => {
      if (this.listeners.remove(channel, listener)) await this.client.query(`UNLISTEN ${name}`);
    };
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}
