import { describe, expect, it } from 'vitest';
import { limitFor, mergeModelLimits, parseModelLimits } from './model-limits.js';

describe('model limits', () => {
  it('governs a model by its exact entry, else by the longest matching prefix*', () => {
    const limits = parseModelLimits(
      [
        { model: 'openai:*', concurrency: 4 },
        { model: 'openai:gpt-5*', concurrency: 2 },
        { model: 'openai:gpt-5.4', requests_per_minute: 60 },
      ],
      'test',
    );
    expect(limitFor(limits, 'openai:gpt-5.4')).toEqual({
      model: 'openai:gpt-5.4',
      requestsPerMinute: 60,
    });
    expect(limitFor(limits, 'openai:gpt-5-mini')?.concurrency).toBe(2);
    expect(limitFor(limits, 'openai:o4')?.concurrency).toBe(4);
    expect(limitFor(limits, 'openai-chat:llama')).toBeUndefined();
  });

  it("lets the environment's entry replace the registry's for the same model", () => {
    const merged = mergeModelLimits(
      [
        { model: 'a', concurrency: 1 },
        { model: 'b', concurrency: 2 },
      ],
      [{ model: 'a', requestsPerMinute: 10 }],
    );
    expect(merged).toEqual([
      { model: 'a', requestsPerMinute: 10 },
      { model: 'b', concurrency: 2 },
    ]);
  });

  it('refuses a malformed entry naming its source, index, model and field', () => {
    expect(() => parseModelLimits([{ model: 'a', concurrency: 1.5 }], 'src')).toThrow(
      /^src: entry 0 \(a\): concurrency: /,
    );
    expect(() => parseModelLimits([{ model: 'a*b' }], 'src')).toThrow(
      /^src: entry 0 \(a\*b\): model: a '\*' may only end a prefix/,
    );
    expect(() => parseModelLimits([{ model: 'a' }, { model: 'a' }], 'src')).toThrow(
      /^src: entry 1 \(a\): model: listed twice/,
    );
    expect(() => parseModelLimits(['a'], 'src')).toThrow(/^src: entry 0: /);
  });
});
