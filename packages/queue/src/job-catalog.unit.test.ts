import { describe, expect, it } from 'vitest';
import { parseJob } from './job-catalog.js';

describe('parseJob', () => {
  it('accepts catalog jobs and rejects bad data with the field name', () => {
    const runId = '7f1c9d5e-2b7a-4c1e-9a39-0d6f2f1c1a11';
    expect(parseJob('continue', { runId, reason: 'reconciled' })).toEqual({
      name: 'continue',
      data: { runId, reason: 'reconciled' },
    });
    expect(() => parseJob('run', { runId: 'nope' })).toThrow(/runId/);
    expect(() => parseJob('continue', { runId, reason: 'whim' })).toThrow(/reason/);
    expect(() => parseJob('other', { runId })).toThrow(/unknown job name/);
  });
});
