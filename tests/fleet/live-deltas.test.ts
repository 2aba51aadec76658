import { BadRequest, createClient, type RunStreamEvent } from '@cairn/client';
import { it } from 'vitest';
import { holderOf, RESEARCHER, startFleet, waitFor } from './fleet.js';

// Redis pub/sub on the Redis backend, LISTEN/NOTIFY on the PostgreSQL one.
const backends = [
  ...(process.env.CAIRN_TEST_REDIS_URL ? (['redis'] as const) : []),
  'postgres',
] as const;

// The backends' cases run side by side, each on a fleet of its own (each SIGKILLs a worker): each
// mostly waits on its model's streamed text.
it.concurrent.for(backends)(
  "SSE ?include=deltas streams the model's text live as it comes, and AttemptAbandoned after a SIGKILL (%s)",
  async (backend, { expect, onTestFinished }) => {
    const f = await startFleet({ backend, toolDelayMs: 300 });
    onTestFinished(() => f.stop());
    // The scripted model streams its text word by word over its latency.
    const [, , producer] = await Promise.all([
      f.spawnWorker('a', { RESEARCH_MODEL_LATENCY_MS: '1500' }),
      f.spawnWorker('b', { RESEARCH_MODEL_LATENCY_MS: '1500' }),
      f.spawnProducer('producer'),
    ]);
    const cairn = createClient({ baseUrl: producer.baseUrl });
    const { run_id } = await cairn.runs.create({
      ...RESEARCHER,
      input: "Research 'cairns'",
      checkpoint: 'tool-batch',
    });

    const seen: (RunStreamEvent & { receivedAt: number })[] = [];
    const following = (async () => {
      for await (const event of cairn.runs.events(run_id, { include: ['deltas'] }))
        seen.push({ ...event, receivedAt: Date.now() });
    })();

    let holder: string | undefined;
    await waitFor(
      async () => {
        const view = await f.client.getRun(run_id);
        holder = holderOf(view);
        return holder !== undefined && (view?.last_checkpoint_at_message_index ?? 0) >= 3;
      },
      20_000,
      'the first checkpoint',
    );
    const victim = f.workers.find((w) => w.id === holder)!;
    victim.kill('SIGKILL');
    await victim.exited;
    await following;

    const run = await cairn.runs.get(run_id);
    expect(run.status).toBe('COMPLETED');
    const final = run.attempts.at(-1)!;
    const answerIndex = run.messages.length - 1;
    const deltas = seen.filter((e) => e.type === 'ModelDelta');
    // Live events carry no sequence number: they are never stored, and the stored stream has no gap.
    expect(deltas.every((e) => e.seq === undefined)).toBe(true);
    expect(seen.filter((e) => e.seq !== undefined).map((e) => e.seq)).toEqual(
      (await f.client.listEvents(run_id)).map((e) => e.seq),
    );
    const answerDeltas = deltas.filter(
      (e) => e.data.message_index === answerIndex && e.data.epoch === final.epoch,
    );
    expect(answerDeltas.length).toBeGreaterThan(5);
    let text = '';
    for (const delta of answerDeltas) {
      expect(delta.data.offset).toBe(text.length);
      text += String(delta.data.text);
    }
    expect(text).toBe(run.content);
    // The text came in over time, before the answer was committed: not all at once at the end.
    const completed = seen.find((e) => e.type === 'RunCompleted')!;
    expect(answerDeltas[0]!.receivedAt).toBeLessThan(answerDeltas.at(-1)!.receivedAt);
    expect(seen.indexOf(answerDeltas.at(-1)!)).toBeLessThan(seen.indexOf(completed));
    const abandoned = seen.filter((e) => e.type === 'AttemptAbandoned');
    expect(abandoned.map((e) => e.data.epoch)).toEqual([final.epoch - 1]);
    expect(seen.indexOf(abandoned[0]!)).toBeLessThan(seen.indexOf(answerDeltas[0]!));

    const bad = await cairn.runs
      .events(run_id, { include: ['everything' as 'deltas'] })
      .next()
      .catch((error: unknown) => error);
    expect(bad).toBeInstanceOf(BadRequest);
    expect((bad as BadRequest).message).toContain('include');
  },
);
