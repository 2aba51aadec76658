import { describe, expect, it } from 'vitest';
import type { Usage } from '@cairn/engine';
import { storedUsageJson, usageOfStored, type StoredUsage } from './usage-column.js';

const read = (usage: Usage): Usage =>
  usageOfStored(JSON.parse(storedUsageJson(usage)) as StoredUsage);

describe('runs.usage as stored', () => {
  it('reads back what was written, absent fields absent', () => {
    const plain: Usage = { inputTokens: 3, outputTokens: 4, totalTokens: 7 };
    const cachedOnly: Usage = { ...plain, cachedInputTokens: 0 };
    const priced: Usage = {
      ...plain,
      costMicroUsd: 12,
      byModel: { m: { inputTokens: 3, cachedInputTokens: 0, outputTokens: 4, costMicroUsd: 12 } },
    };
    expect(read(plain)).toEqual(plain);
    expect(read(cachedOnly)).toEqual(cachedOnly);
    expect(read(priced)).toEqual(priced);
    expect(Object.keys(read(plain))).toEqual(['inputTokens', 'outputTokens', 'totalTokens']);
  });

  it('is positional with trailing absent fields left out, and a middle one null', () => {
    expect(storedUsageJson({ inputTokens: 3, outputTokens: 4, totalTokens: 7 })).toBe('[3,4,7]');
    expect(
      storedUsageJson({
        inputTokens: 3,
        outputTokens: 4,
        totalTokens: 7,
        costMicroUsd: 9,
        byModel: { m: { inputTokens: 3, cachedInputTokens: 1, outputTokens: 4, costMicroUsd: 9 } },
      }),
    ).toBe('[3,4,7,null,9,{"m":[3,1,4,9]}]');
  });
});
