import type { RedisConnection } from '../redis-connection.js';

/** How long a model seen ungoverned is trusted without asking again (a lost notice, or a 429 on a worker that sends none). */
export const DEFAULT_UNGOVERNED_TTL_MS = 10_000;

/**
 * The models nothing governs fleet-wide (no configured limit, no adaptive
 * cap, no pause) as this worker last saw them, so that their permits take
 * no round trip. A 429 anywhere in the fleet publishes the model on
 * `channel`, which forgets it here; so does losing the subscription, and
 * an entry older than its TTL. A model is only remembered from an answer
 * asked while the subscription was live and nothing was forgotten since
 * the question went out, so no notice can fall between the answer and the
 * subscription (docs/operations.md, "Model capacity").
 */
export class UngovernedModels {
  readonly #subscriber: RedisConnection;
  readonly #channel: string;
  readonly #ttlMs: number;
  readonly #seenAt = new Map<string, number>();
  /** Bumped by everything that forgets: an answer asked before it is not remembered. */
  #generation = 0;
  /** Whether notices reach this worker: `live` once a subscribe has been answered since the connection last closed. */
  #subscription: 'none' | 'asked' | 'live' = 'none';

  constructor(subscriber: RedisConnection, channel: string, ttlMs = DEFAULT_UNGOVERNED_TTL_MS) {
    this.#subscriber = subscriber;
    this.#channel = channel;
    this.#ttlMs = ttlMs;
    subscriber.on('error', () => undefined);
    subscriber.on('message', (from: string, model: string) => {
      if (from === channel) this.forget(model);
    });
    subscriber.on('close', () => {
      this.#subscription = 'none';
      this.#seenAt.clear();
      this.#generation++;
    });
  }

  /** True when `model` was seen ungoverned within the TTL, with no 429 heard of since. */
  has(model: string): boolean {
    const seenAt = this.#seenAt.get(model);
    if (seenAt === undefined) return false;
    if (Date.now() - seenAt < this.#ttlMs) return true;
    this.#seenAt.delete(model);
    return false;
  }

  /**
   * Called before asking the server: a ticket for {@link remember}, or
   * undefined while the subscription is not live yet (it is then started,
   * and the answer is not remembered).
   */
  ticket(): number | undefined {
    if (this.#subscription === 'live') return this.#generation;
    if (this.#subscription === 'none') {
      this.#subscription = 'asked';
      this.#subscriber.subscribe(this.#channel).then(
        () => {
          if (this.#subscription === 'asked') this.#subscription = 'live';
        },
        () => {
          if (this.#subscription === 'asked') this.#subscription = 'none';
        },
      );
    }
    return undefined;
  }

  /** The server answered that nothing governs `model`, to a question asked with `ticket`. */
  remember(model: string, ticket: number | undefined): void {
    if (this.#subscription === 'live' && ticket === this.#generation)
      this.#seenAt.set(model, Date.now());
  }

  /** Something may govern `model` now (a 429): ask the server again. */
  forget(model: string): void {
    this.#seenAt.delete(model);
    this.#generation++;
  }
}
