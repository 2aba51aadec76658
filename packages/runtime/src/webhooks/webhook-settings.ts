/** How workers deliver webhooks (`CAIRN_WEBHOOK_*`), and whether endpoints may target private addresses. */
export interface WebhookSettings {
  /** Attempts of one delivery, the first included (`CAIRN_WEBHOOK_MAX_ATTEMPTS`). @defaultValue 8 */
  maxAttempts: number;
  /** The wait before the first retry; each next one waits twice as long (`CAIRN_WEBHOOK_BACKOFF_MS`). @defaultValue 5000 */
  backoffMs: number;
  /** The longest wait between two attempts (`CAIRN_WEBHOOK_MAX_BACKOFF_MS`). @defaultValue 3600000 */
  maxBackoffMs: number;
  /** How long one attempt may take, connection and answer (`CAIRN_WEBHOOK_TIMEOUT_MS`). @defaultValue 10000 */
  timeoutMs: number;
  /** How often each worker looks for recorded events to dispatch (`CAIRN_WEBHOOK_POLL_MS`). @defaultValue 1000 */
  pollMs: number;
  /** `CAIRN_WEBHOOK_ALLOW_PRIVATE=true`: endpoints may target loopback, private and link-local addresses. @defaultValue false */
  allowPrivate: boolean;
}

/** The webhook settings when no variable is set. */
export const DEFAULT_WEBHOOK_SETTINGS: Readonly<WebhookSettings> = Object.freeze({
  maxAttempts: 8,
  backoffMs: 5_000,
  maxBackoffMs: 3_600_000,
  timeoutMs: 10_000,
  pollMs: 1_000,
  allowPrivate: false,
});

/** The wait before attempt `attemptsMade + 1` of a delivery: exponential from `backoffMs`, capped at `maxBackoffMs`. */
export function webhookBackoffMs(
  attemptsMade: number,
  settings: Pick<WebhookSettings, 'backoffMs' | 'maxBackoffMs'>,
): number {
  return Math.min(settings.maxBackoffMs, settings.backoffMs * 2 ** Math.max(0, attemptsMade - 1));
}
