/**
 * Model capacity across a fleet (docs/capacity.md and docs/operations.md, "Model capacity"): three worker
 * processes on each queue backend (and its limiter: Redis, or Postgres with
 * BullMQ's PostgreSQL backend) against a provider-like server that answers
 * 429 past its quota. One fleet and one server per backend serve every case,
 * each case on a model of its own, so the server's ledger per model is the
 * case's.
 */
import { fileURLToPath } from 'node:url';
import { DELEGATE_TOOL_NAME } from '@cairn/engine';
import {
  firstUserInput,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '@cairn/engine/testing';
import { requiresBackend } from '@cairn/services';
import type { RunView } from '@cairn/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allTools,
  holderOf,
  QUEUE_BACKENDS,
  startFleet,
  waitFor,
  type Fleet,
  type SpawnedProducer,
} from '../fleet/fleet.js';
import {
  agentOn,
  capacityScript,
  createRegistry,
  modelName,
  readToolLedger,
  teamOn,
  type CapacityModel,
} from './capacity-registry.js';
import { expectEachCommittedToolRanOnce } from './committed-once.js';

const REGISTRY = fileURLToPath(new URL('./capacity-registry.ts', import.meta.url));
/** Each case waits on processes and on a provider's pace: a loaded machine takes its time. */
const TEST_TIMEOUT_MS = 120_000;
/** How long a case waits for its runs to end: below {@link TEST_TIMEOUT_MS}, so a stuck run is named. */
const RUNS_TIMEOUT_MS = 100_000;
/** How long each answer of the provider takes. */
const LATENCY_MS = 300;
/** The workers' `CAIRN_MAX_ATTEMPTS`: claims without progress a run may take (capacity claims not counted). */
const MAX_ATTEMPTS = 2;

/** Requests per minute of the `metered` model, at the provider and in the fleet's limit. */
const METERED_RPM = 6;

/**
 * The provider's quota per model, and the fleet's limits (`CAIRN_MODEL_LIMITS`):
 * `paced`, `guarded` and `metered` are limited exactly as the provider limits
 * them, `single` to one request at a time, `unruled` is limited by the
 * provider only, `free` by nobody.
 */
const QUOTA = {
  paced: { concurrency: 2 },
  unruled: { concurrency: 2 },
  single: { concurrency: 1 },
  guarded: { concurrency: 2 },
  metered: { requestsPerMinute: METERED_RPM },
} as const satisfies Partial<Record<CapacityModel, object>>;
const MODEL_LIMITS = [
  { model: modelName('paced'), concurrency: 2 },
  { model: modelName('single'), concurrency: 1 },
  { model: modelName('guarded'), concurrency: 2 },
  { model: modelName('metered'), requests_per_minute: METERED_RPM },
];

type RunRef = { kind: 'agent' | 'team'; name: string };

// The backends' fleets run side by side (each mostly waits on its provider); each one's cases run in turn.
for (const backend of QUEUE_BACKENDS)
  describe.concurrent(
    `model capacity across a fleet of workers (${backend})`,
    requiresBackend(backend),
    () => {
      let fleet: Fleet;
      let server: FakeOpenAIServer;
      let producer: SpawnedProducer;
      /** A model's next admitted request, held in flight at the provider until the case releases it. */
      let hold:
        | { model: string; inputs: ReadonlySet<string>; input?: string; released: Promise<void> }
        | undefined;
      /** Runs on the `metered` model, submitted as the fleet starts: a limit per minute takes a minute to show. */
      let meteredRuns: string[] = [];

      beforeAll(async () => {
        server = await startFakeOpenAIServer({
          decide: capacityScript,
          latencyMs: LATENCY_MS,
          quota: { perModel: QUOTA },
          beforeAnswer: ({ model, context }) => {
            const input = firstUserInput(context.messages);
            if (hold?.model !== model || hold.input !== undefined || !hold.inputs.has(input))
              return;
            hold.input = input;
            return hold.released;
          },
        });
        fleet = await startFleet({
          backend,
          // A lock long enough that a worker slowed by a loaded machine keeps its runs (a takeover is a claim without progress).
          lockMs: 5_000,
          stalledIntervalMs: 1_000,
          registryModule: REGISTRY,
          registry: createRegistry({ baseUrl: server.url }),
        });
        const env = {
          OPENAI_BASE_URL: server.url,
          WORKER_CONCURRENCY: '2',
          CAIRN_MODEL_LIMITS: JSON.stringify(MODEL_LIMITS),
          CAIRN_CAPACITY_WAIT_MS: '150',
          CAIRN_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
        };
        // Side by side, and beside the other backend's fleet: one at a time, eight starts on a loaded
        // machine took most of two minutes.
        [producer] = await Promise.all([
          fleet.spawnProducer('producer'),
          Promise.all(['a', 'b', 'c'].map((name) => fleet.spawnWorker(name, env))),
        ]);
        meteredRuns = await submit(agentOn('metered'), 2);
      });
      afterAll(async () => {
        await fleet?.stop();
        await server?.close();
      });

      async function submit(entity: RunRef, n: number): Promise<string[]> {
        const runs = await Promise.all(
          Array.from({ length: n }, (_, i) =>
            fleet.client.enqueueRun({ entity, input: inputOf(entity, i) }),
          ),
        );
        return runs.map((r) => r.runId);
      }

      function inputOf(entity: RunRef, i: number): string {
        return `${entity.name} topic ${i}`;
      }

      async function finished(runIds: readonly string[]): Promise<RunView[]> {
        await Promise.all(
          runIds.map((id) => fleet.client.waitForRun(id, { timeoutMs: RUNS_TIMEOUT_MS })),
        );
        return Promise.all(runIds.map(async (id) => (await fleet.client.getRun(id))!));
      }

      /** The run as `GET /v1/runs/:id` shows it. */
      async function runPage(runId: string): Promise<RunView> {
        return (await (await fetch(`${producer.baseUrl}/v1/runs/${runId}`)).json()) as RunView;
      }

      function expectAllCompleted(views: readonly RunView[]): void {
        expect(views.map((v) => `${v.input}: ${v.status}`)).toEqual(
          views.map((v) => `${v.input}: COMPLETED`),
        );
        for (const v of views) expect(v.content).toContain(`Report on ${v.input}`);
      }

      describe.sequential('each case on a model of its own', () => {
        it(
          'a limit equal to the provider quota: every run completes and the provider never answers 429',
          async () => {
            const views = await finished(await submit(agentOn('paced'), 6));
            expectAllCompleted(views);
            // Six worker slots asked a model that takes two requests at once: the fleet kept to two.
            expect(server.quota.rejected('paced')).toBe(0);
            expect(server.quota.accepted('paced')).toBeGreaterThanOrEqual(6 * 4);
          },
          TEST_TIMEOUT_MS,
        );

        it(
          'no limit configured and a quota the fleet exceeds: 429s come back, then the fleet governs the model itself, every run completes',
          async () => {
            const views = await finished(await submit(agentOn('unruled'), 6));
            // A 429 is capacity, not failure: no run in ERROR, none out of model retries.
            expectAllCompleted(views);
            const rejected = server.quota.rejected('unruled');
            const accepted = server.quota.accepted('unruled');
            expect(accepted).toBeGreaterThanOrEqual(6 * 4);
            expect(rejected).toBeGreaterThan(0);
            // Governed from the first 429 on (paused, then an adaptive limit): 429s stay well below the answers.
            expect(rejected).toBeLessThan(accepted / 2);
          },
          TEST_TIMEOUT_MS,
        );

        it(
          'runs park for capacity: RUNNING with waiting shown, claimed again with reason capacity, each completing under CAIRN_MAX_ATTEMPTS; a run on an unlimited model goes by',
          async () => {
            const ids = await submit(agentOn('single'), 6);
            // In `run` mode a run has no checkpoint to park on: it waits in place.
            const inPlace = await fleet.client.enqueueRun({
              entity: agentOn('single'),
              input: 'researcher-single in place',
              checkpoint: 'run',
            });

            // What GET /v1/runs/:id shows while a run is parked after a claim: RUNNING, held by no
            // worker, waiting for the model (a run held in line before its first claim shows its
            // waiting too, PENDING: docs/capacity.md, "Before the first claim").
            let parked: RunView | undefined;
            await waitFor(
              async () => {
                for (const view of await Promise.all(ids.map(runPage)))
                  if (
                    view.waiting !== null &&
                    view.attempts.length > 0 &&
                    holderOf(view) === undefined
                  )
                    parked = view;
                return parked !== undefined;
              },
              60_000,
              'a run shown parked',
            );
            expect(parked!.status).toBe('RUNNING');
            expect(parked!.waiting).toEqual({
              for: 'capacity',
              model: modelName('single'),
              until: expect.any(String),
            });
            expect(Number.isNaN(Date.parse(parked!.waiting!.until))).toBe(false);
            expect(parked!.attempts.at(-1)!.outcome).toBe('parked');

            // Six runs take turns at one request at a time: a run on another model does not wait behind them.
            const [free] = await finished(await submit(agentOn('free'), 1));
            expectAllCompleted([free!]);
            const behind = await Promise.all(ids.map((id) => fleet.client.getRunStatus(id)));
            expect(
              behind.filter((status) => status === 'RUNNING' || status === 'PENDING').length,
            ).toBeGreaterThan(0);

            const views = await finished(ids);
            expectAllCompleted(views);
            for (const v of views) expect(v.waiting).toBeNull();
            const [waitedInPlace] = await finished([inPlace.runId]);
            expectAllCompleted([waitedInPlace!]);
            expect(waitedInPlace!.attempts.map((a) => a.outcome)).toEqual(['completed']);
            const parks = views.map((v) => v.attempts.filter((a) => a.outcome === 'parked').length);
            const capacityClaims = views.map(
              (v) => v.attempts.filter((a) => a.reason === 'capacity').length,
            );
            // Every park was followed by a claim with reason capacity.
            expect(capacityClaims).toEqual(parks);
            // Some run parked after a claim, and every run completed under the attempts cap: how often
            // a run parks follows the contention (runs now wait in line before their claims, so under
            // load no run parked more than the cap allows). That a run parked more often than the cap
            // still completes is held by capacity-park.test.ts ("never counts capacity pickups toward
            // the attempts cap"), four parks against a cap of one.
            expect(Math.max(...parks)).toBeGreaterThan(0);
            expect(server.quota.rejected('single')).toBe(0);
            expect(server.quota.accepted('free')).toBeGreaterThanOrEqual(4);
          },
          TEST_TIMEOUT_MS,
        );

        it(
          'a worker SIGKILLed while runs are parked and it holds a permit: every run completes, no committed tool batch runs again',
          async () => {
            // The kill point: a run is parked while a request of a run the victim holds is in flight
            // (one of the two permits), held at the provider until the victim is dead.
            let release!: () => void;
            const entities = [agentOn('guarded'), teamOn('guarded')];
            hold = {
              model: 'guarded' satisfies CapacityModel, // as the provider sees it
              // A request of one of the submitted runs themselves (a member's asks with its own input).
              inputs: new Set(entities.flatMap((e) => [0, 1].map((i) => inputOf(e, i)))),
              released: new Promise<void>((resolve) => (release = resolve)),
            };
            const ids = (await Promise.all(entities.map((e) => submit(e, 2)))).flat();
            const runOfInput = new Map(
              (await Promise.all(ids.map(async (id) => (await fleet.client.getRun(id))!))).map(
                (v) => [v.input, v.run_id],
              ),
            );

            let victim: (typeof fleet.workers)[number] | undefined;
            let held: string | undefined;
            await waitFor(
              async () => {
                held = hold?.input === undefined ? undefined : runOfInput.get(hold.input);
                if (held === undefined) return false;
                const views = await Promise.all(
                  ids.map(async (id) => (await fleet.client.getRun(id))!),
                );
                if (!views.some((v) => v.waiting !== null && holderOf(v) === undefined))
                  return false;
                const holder = holderOf(views.find((v) => v.run_id === held));
                victim = fleet.workers.find((w) => w.id === holder && w.alive);
                return victim !== undefined;
              },
              60_000,
              'a parked run while a request is held in flight',
            );
            victim!.kill('SIGKILL');
            await victim!.exited;
            release();
            hold = undefined;

            const views = await finished(ids);
            expect(views.map((v) => v.status)).toEqual(views.map(() => 'COMPLETED'));
            for (const v of views) expect(v.content).toContain(v.input);
            const heldView = views.find((v) => v.run_id === held)!;
            expect(
              heldView.attempts.some((a) => a.reason === 'recovered' && a.worker_id !== victim!.id),
            ).toBe(true);

            // Every tool call answered (a failed one names its error here).
            expect(
              views
                .flatMap(allTools)
                .filter((t) => t.status !== 'completed')
                .map((t) => `${t.name} ${t.status}: ${t.result}`),
            ).toEqual([]);
            // A committed tool result names the execution that produced it: that one ran once, and none after it.
            const ledger = readToolLedger(fleet.ledgerFile);
            const committed = views
              .flatMap(allTools)
              .filter((t) => t.name !== DELEGATE_TOOL_NAME && t.status === 'completed');
            expect(committed).toHaveLength(4 * 3);
            expectEachCommittedToolRanOnce(expect, committed, ledger);
            // The turn the victim had in flight was asked again; its permit was not handed out while that request could still run.
            expect(server.quota.accepted('guarded')).toBeGreaterThan(2 * 4 + 2 * 6);
            expect(server.quota.rejected('guarded')).toBe(0);
          },
          TEST_TIMEOUT_MS,
        );

        it(
          'a limit per minute equal to the provider quota: runs that need more requests than a minute allows wait parked for the window, and the provider never answers 429',
          async () => {
            const views = await finished(meteredRuns);
            expectAllCompleted(views);
            // Eight requests against six a minute: the last ones waited for the first to leave the window, parked.
            expect(views.some((v) => v.attempts.some((a) => a.outcome === 'parked'))).toBe(true);
            // A 429 here is a request the limiter let go before the provider's window had room: the provider
            // counts a request from its receipt, which comes after the permit by however long the worker took to send it.
            expect(server.quota.rejected('metered')).toBe(0);
            expect(server.quota.accepted('metered')).toBeGreaterThanOrEqual(2 * 4);
          },
          TEST_TIMEOUT_MS,
        );
      });
    },
  );
