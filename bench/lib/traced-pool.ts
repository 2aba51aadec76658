import pg from 'pg';

/** One statement a traced client sent, with its round-trip time. */
export interface QueryTrace {
  /** The first words of the SQL text, lower-cased (`begin`, `update "runs"`, `insert into "run_messages"`). */
  statement: string;
  ms: number;
}

/** A pg pool whose clients record every statement's round-trip time. */
export interface TracedPool {
  pool: pg.Pool;
  /** Returns the traces recorded since the last call and clears them. */
  take(): QueryTrace[];
}

function statementOf(args: unknown[]): string {
  const first = args[0];
  const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text ?? '?';
  return text.trim().toLowerCase().split(/\s+/).slice(0, 3).join(' ').replace(/\(.*$/, '');
}

/** Creates a pool on `url` whose every query is timed. */
export function tracedPool(url: string, max = 10): TracedPool {
  const pool = new pg.Pool({ connectionString: url, max });
  let traces: QueryTrace[] = [];
  pool.on('connect', (client) => {
    const original = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const start = process.hrtime.bigint();
      const result = original(...args);
      if (result instanceof Promise) {
        const record = () => traces.push({ statement: statementOf(args), ms: Number(process.hrtime.bigint() - start) / 1e6 });
        result.then(record, record);
      }
      return result;
    };
  });
  return {
    pool,
    take: () => {
      const taken = traces;
      traces = [];
      return taken;
    },
  };
}
