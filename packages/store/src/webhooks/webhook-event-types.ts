/**
 * The event types a webhook endpoint can take: a root run paused for a person (`run.paused`, with its
 * pending actions) or for its budget (`run.budget_paused`), completed, errored or cancelled, and a
 * schedule's firing skipped by its overlap policy. The `runs` trigger of `0026_webhooks` records the
 * run ones; `recordWebhookEvent` any.
 */
export const WEBHOOK_EVENT_TYPES = [
  'run.paused',
  'run.budget_paused',
  'run.completed',
  'run.errored',
  'run.cancelled',
  'schedule.run_skipped',
] as const;

/** One of {@link WEBHOOK_EVENT_TYPES}. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
