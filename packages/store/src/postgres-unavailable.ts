/**
 * Error codes that mean Postgres could not be reached, would not let us in,
 * or dropped the connection (not a problem of the statement or the schema).
 */
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EPIPE',
  '3D000', // database does not exist
  '28P01', // password authentication failed
  '28000', // invalid authorization
  '57P01', // terminating connection due to administrator command (a shutdown)
  '57P02', // terminating connection due to crash of another server process
  '57P03', // the database system is starting up
  '08000', // connection exception
  '08001', // the client could not establish the connection
  '08003', // connection does not exist
  '08006', // connection failure
]);

/** What node-postgres throws, without a code, when the server goes away under a query. */
const TERMINATED = /^Connection terminated/;

/**
 * True when `error`, or one of its causes, says Postgres is unavailable
 * (unreachable, refusing us, or gone mid-query): worth a retry later, and
 * answered by the API as 503, not as a fault of the request.
 */
export function isPostgresUnavailable(error: unknown): boolean {
  for (
    let current = error, depth = 0;
    current !== undefined && current !== null && depth < 5;
    depth++
  ) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
    if (typeof message === 'string' && TERMINATED.test(message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
