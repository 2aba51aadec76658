import { summarize, type Summary } from './stats.js';

/** One measured figure of the benchmark: a value with its unit, sample count and spread. */
export interface Figure {
  /** Section id (`checkpoint`, `history`, ...). */
  section: string;
  name: string;
  /** The headline value (a median unless `unit` or the note says otherwise); null when not run. */
  value: number | null;
  unit: string;
  /** Number of samples behind the value. */
  n: number;
  /** How the samples spread, in words (p95, min..max or IQR). */
  spread: string;
  /** The goal from the issue, e.g. `<= 1.2`. */
  goal?: string;
  /** Whether the value meets `goal`. */
  met?: boolean;
  /** What a ratio divides, e.g. `93.8 / 136.6 runs/s`: printed beside it in the Goals table. */
  basis?: string;
  note?: string;
  /** Full statistics of the samples, when the value is a median of them. */
  stats?: Summary;
}

/** A goal on a figure: `<=` or `>=` a bound, or `=` it exactly (a count or a ratio that must not drift). */
export interface Goal {
  op: '<=' | '>=' | '=';
  bound: number;
}

/** Formats a number with a precision suited to its size. */
export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const abs = Math.abs(x);
  if (abs >= 1000) return x.toFixed(0);
  if (abs >= 100) return x.toFixed(1);
  if (abs >= 10) return x.toFixed(2);
  return x.toFixed(3);
}

function withGoal(figure: Figure, goal: Goal | undefined): Figure {
  if (!goal || figure.value === null) return figure;
  const met =
    goal.op === '<='
      ? figure.value <= goal.bound
      : goal.op === '>='
        ? figure.value >= goal.bound
        : figure.value === goal.bound;
  return { ...figure, goal: `${goal.op} ${goal.bound}`, met };
}

/** A figure whose value is the median of `samples`; spread is p95 and min..max. */
export function medianFigure(
  section: string,
  name: string,
  samples: readonly number[],
  unit: string,
  options: { goal?: Goal; note?: string } = {},
): Figure {
  const stats = summarize(samples);
  const spread = `p95 ${fmt(stats.p95)}, min..max ${fmt(stats.min)}..${fmt(stats.max)}`;
  return withGoal(
    { section, name, value: stats.median, unit, n: stats.n, spread, stats, note: options.note },
    options.goal,
  );
}

/** A figure with an explicit value and spread (ratios, rates). */
export function valueFigure(
  section: string,
  name: string,
  value: number,
  unit: string,
  n: number,
  spread: string,
  options: { goal?: Goal; note?: string; stats?: Summary; basis?: string } = {},
): Figure {
  return withGoal(
    {
      section,
      name,
      value,
      unit,
      n,
      spread,
      note: options.note,
      stats: options.stats,
      ...(options.basis !== undefined && { basis: options.basis }),
    },
    options.goal,
  );
}

/** A figure that could not be measured, with the reason. */
export function notRunFigure(section: string, name: string, reason: string, goal?: Goal): Figure {
  return {
    section,
    name,
    value: null,
    unit: '',
    n: 0,
    spread: '',
    goal: goal && `${goal.op} ${goal.bound}`,
    note: `not run: ${reason}`,
  };
}

/** Ratio of two medians, with the IQR of paired per-round ratios as its spread and the two medians (in `sides`' unit) as its basis. */
export function ratioFigure(
  section: string,
  name: string,
  numerator: readonly number[],
  denominator: readonly number[],
  options: { goal?: Goal; note?: string; sides?: string } = {},
): Figure {
  const a = summarize(numerator);
  const b = summarize(denominator);
  const pairs = numerator.slice(0, denominator.length).map((x, i) => x / denominator[i]!);
  const paired = summarize(pairs);
  const spread = `paired ratios IQR ${fmt(paired.p25)}..${fmt(paired.p75)}, p95 ${fmt(paired.p95)}`;
  const { sides, ...rest } = options;
  return valueFigure(section, name, a.median / b.median, 'x', Math.min(a.n, b.n), spread, {
    ...rest,
    stats: paired,
    basis: `${fmt(a.median)} / ${fmt(b.median)}${sides ? ` ${sides}` : ''}`,
  });
}
