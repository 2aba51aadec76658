/**
 * Open event streams by holder (an API key, or a client address with auth
 * off), at most `maxPerHolder` each: a slot is taken when a stream opens and
 * given back when it ends, however it ends.
 */
export class StreamSlots {
  private readonly open = new Map<string, number>();

  constructor(readonly maxPerHolder: number) {}

  /** Takes a slot for `holder`: the function that gives it back (once, however often called), or undefined when `holder` has none left. */
  take(holder: string): (() => void) | undefined {
    const held = this.open.get(holder) ?? 0;
    if (held >= this.maxPerHolder) return undefined;
    this.open.set(holder, held + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.open.get(holder) ?? 1) - 1;
      if (left > 0) this.open.set(holder, left);
      else this.open.delete(holder);
    };
  }
}
