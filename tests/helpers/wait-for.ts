/**
 * The suite's one wait: polls `check` every 50 ms until it is true; fails
 * after `timeoutMs` naming `what`, or at once when `exited` resolves (the
 * process that should make it true has died). A check that reads a value
 * keeps it in a variable of the caller.
 */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
  exited?: Promise<unknown>,
): Promise<void> {
  let died = false;
  void exited?.then(() => (died = true));
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (died) throw new Error(`process exited while waiting for ${what}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
