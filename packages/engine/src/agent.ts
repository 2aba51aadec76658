import { Entity, type EntityOptions } from './entity.js';

/** Options of {@link Agent}: those every entity has ({@link EntityOptions}). */
export type AgentOptions<Output = unknown> = EntityOptions<Output>;

/** An LLM with tools and instructions, run by the engine's turn loop. */
export class Agent<Output = unknown> extends Entity<Output> {
  readonly kind = 'agent' as const;

  constructor(options: AgentOptions<Output>) {
    super('agent', options);
  }
}
