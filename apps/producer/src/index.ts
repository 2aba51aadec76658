/**
 * `@cairn/producer`'s public surface, chosen on purpose: start the producer
 * in your own process (`startProducer`), or mount its app in your own server
 * (`createApp`), and drive runs from code (`ProducerService`). Each export
 * here is tagged `@public`; knip reports any other export of the entry, so
 * the package's own modules stay its own.
 */

/** @public */
export { startProducer, type StartProducerOptions, type CairnProducer } from './start-producer.js';
/** @public */
export { createApp, type AppDeps, type AppLimits } from './app.js';
/** @public The base of the producer's errors (each has `status` and `code`). */
export { ProducerError } from './errors.js';
/** @public */
export type { ContinueRunOptions, ContinueRunResult, ProducerClient } from './producer-client.js';
/** @public */
export {
  ProducerService,
  type ProducerServiceConfig,
  type ProducerServiceDeps,
} from './producer-service.js';
