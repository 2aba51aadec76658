import pg from 'pg';

/** One statement a traced client sent, with its round-trip time. */
export interface QueryTrace {
  /** The statement's verb and first table (`begin`, `update runs`, `insert run_commits`, `select runs`). */
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
  const text = (
    typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '?')
  )
    .trim()
    .toLowerCase();
  const verb = text.split(/\s+/)[0] ?? '?';
  if (['begin', 'commit', 'rollback', 'start'].includes(verb)) return verb;
  const table = /(?:into|update|from)\s+"?([a-z_][a-z0-9_]*)"?/.exec(text)?.[1];
  return table ? `${verb} ${table}` : verb;
}

/** Creates a pool on `url` whose every query is timed. */
export function tracedPool(url: string, max = 10): TracedPool {
  const pool = new pg.Pool({ connectionString: url, max });
  let traces: QueryTrace[] = [];
  pool.on('connect', (client) => {
    const original = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (
      ...args: unknown[]
    ) => {
      const start = process.hrtime.bigint();
      const result = original(...args);
      if (result instanceof Promise) {
        const record = () =>
          traces.push({
            statement: statementOf(args),
            ms: Number(process.hrtime.bigint() - start) / 1e6,
          });
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
