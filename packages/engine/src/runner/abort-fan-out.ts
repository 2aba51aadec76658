/**
 * One abort listener on a run's signal for a whole tool batch, passing its
 * abort on to each running call's own controller. A listener per call would
 * cost quadratic time on a wide batch: Node's `EventTarget` walks its
 * listener list on every add and remove.
 */
export class AbortFanOut {
  private readonly controllers = new Set<AbortController>();
  private readonly onAbort = (): void => {
    for (const controller of this.controllers) controller.abort(this.signal.reason);
  };

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** A controller for one call: aborted with the signal's reason when the signal aborts, until released. */
  open(): AbortController {
    const controller = new AbortController();
    if (this.signal.aborted) controller.abort(this.signal.reason);
    else this.controllers.add(controller);
    return controller;
  }

  /** The call is done: its controller no longer follows the signal. */
  release(controller: AbortController): void {
    this.controllers.delete(controller);
  }

  /** Every call of the batch is done: the listener leaves the signal. */
  close(): void {
    this.signal.removeEventListener('abort', this.onAbort);
  }
}
