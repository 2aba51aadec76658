const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/** Parses an age such as `7d`, `12h` or `30m` into milliseconds; throws naming the value otherwise. */
export function parseAge(value: string): number {
  const match = /^(\d+)([dhm])$/.exec(value.trim());
  if (!match)
    throw new TypeError(
      `--older-than: expected a number and a unit (7d, 12h, 30m), got ${JSON.stringify(value)}`,
    );
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}
