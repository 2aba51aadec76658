/** Prefix of the line a child process prints its result on. */
export const RESULT_PREFIX = '@@BENCH_RESULT ';

/** Prints `value` as the child's result line (read by `runChild`). */
export function reportResult(value: unknown): void {
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(value)}\n`);
}
