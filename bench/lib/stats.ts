/** Summary statistics of a sample set. */
export interface Summary {
  /** Sample count. */
  n: number;
  median: number;
  p95: number;
  min: number;
  max: number;
  mean: number;
  /** 25th and 75th percentiles. */
  p25: number;
  p75: number;
}

/** The `p`-th percentile (0..100) of ascending `sorted`, linearly interpolated. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const a = sorted[low]!;
  const b = sorted[high]!;
  return a + (b - a) * (rank - low);
}

/** Median of `samples` (any order). */
export function median(samples: readonly number[]): number {
  return percentile(
    [...samples].sort((a, b) => a - b),
    50,
  );
}

/** Median, p95, min, max, mean and quartiles of `samples`. */
export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((s, x) => s + x, 0);
  return {
    n: sorted.length,
    median: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    p25: percentile(sorted, 25),
    p75: percentile(sorted, 75),
  };
}
