import type { TestOptions } from 'vitest';
import { findChromium } from './find-chromium.js';
import { hasTestRedis } from './test-redis-url.js';

/** A binary some tests need and a machine may lack, with what to install to get it. */
export interface MachineRequirement {
  /** The binary's name, as the closing line of a test run names it. */
  binary: string;
  /** How to install it. */
  install: string;
}

declare module 'vitest' {
  interface TaskMeta {
    /** Set by {@link requires}: the binary this test needs; a skipped test carrying it is counted in the closing line. */
    requires?: MachineRequirement;
  }
}

/** The Redis server binary. */
export const REDIS_SERVER: MachineRequirement = {
  binary: 'redis-server',
  install: 'apt-get install redis-server, or set REDIS_URL',
};

/** The Chromium browser the run-page tests drive (never a downloaded one). */
export const CHROMIUM: MachineRequirement = {
  binary: 'chromium',
  install: 'apt-get install chromium',
};

/**
 * Suite or test options that skip it when `available` is false and tag it with what it needs, so the
 * missing-services reporter names what to install.
 *
 * @example
 * describe('Redis restarts', requires(REDIS_SERVER, hasTestRedis()), () => { ... });
 */
export function requires(requirement: MachineRequirement, available: boolean): TestOptions {
  return { skip: !available, meta: { requires: requirement } };
}

/** Options for a suite that needs the test run's Redis: skipped, and reported, without one. */
export function requiresRedis(): TestOptions {
  return requires(REDIS_SERVER, hasTestRedis());
}

/** Options for a suite on one queue backend: the Redis one needs the test run's Redis, the PostgreSQL one nothing more. */
export function requiresBackend(backend: 'redis' | 'postgres'): TestOptions {
  return backend === 'redis' ? requiresRedis() : {};
}

/** Options for a suite that drives the machine's chromium: skipped, and reported, without one. */
export function requiresChromium(): TestOptions {
  return requires(CHROMIUM, findChromium() !== undefined);
}
