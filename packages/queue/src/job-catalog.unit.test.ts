import { describe, expect, it } from 'vitest';
import { parseJob } from './job-catalog.js';

const runId = '7f1c9d5e-2b7a-4c1e-9a39-0d6f2f1c1a11';

describe('parseJob', () => {
  it('accepts catalog jobs and rejects bad data with the field name', () => {
    expect(parseJob('continue', { runId, reason: 'reconciled' })).toEqual({
      name: 'continue',
      data: { runId, reason: 'reconciled' },
    });
    expect(() => parseJob('run', { runId: 'nope' })).toThrow(/runId/);
    expect(() => parseJob('continue', { runId, reason: 'whim' })).toThrow(/reason/);
    expect(() => parseJob('other', { runId })).toThrow(/unknown job name/);
    expect(() => parseJob('run', { runId, entity: { kind: 'robot', name: 'a' } })).toThrow(
      /entity\.kind/,
    );
  });

  it('runs a job that a newer producer or worker added fields to, leaving them out of the parsed data (rolling deploys)', () => {
    const newer = { futureField: { any: 'shape' }, anotherOne: 7 };
    expect(parseJob('run', { runId, ...newer })).toEqual({ name: 'run', data: { runId } });
    expect(parseJob('continue', { runId, reason: 'handover', ...newer })).toEqual({
      name: 'continue',
      data: { runId, reason: 'handover' },
    });
    const expire = { runId, actionId: 'a1', expiresAt: '2026-12-04T22:00:00.000Z' };
    expect(parseJob('expire', { ...expire, ...newer })).toEqual({ name: 'expire', data: expire });
    // A field it knows is still checked, wherever the job came from.
    expect(() =>
      parseJob('continue', { runId, reason: 'continue', priority: 0, ...newer }),
    ).toThrow(/priority/);
  });
});
