import type { CommitVariant } from './commit-variants.js';
import { msSince } from './timing.js';

/**
 * Runs the variants in turn, rotating which goes first each round, and
 * returns each one's durations (ms) per round, warm-up rounds dropped, so that
 * index i of every list comes from the same round (paired samples).
 */
export async function alternate(
  variants: readonly CommitVariant[],
  rounds: number,
  warmup: number,
): Promise<number[][]> {
  const samples = variants.map((): number[] => []);
  for (let round = 0; round < warmup + rounds; round++) {
    for (let k = 0; k < variants.length; k++) {
      const index = (round + k) % variants.length;
      const variant = variants[index]!;
      await variant.prepare();
      const start = process.hrtime.bigint();
      await variant.commit();
      if (round >= warmup) samples[index]!.push(msSince(start));
    }
  }
  return samples;
}
