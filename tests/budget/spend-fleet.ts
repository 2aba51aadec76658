import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { modelFromSpec } from '@cairn/runtime';
import { createRegistry, researchTeamScript } from '@cairn/research-team';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '@cairn/engine/testing';
import type { PendingActionRecord } from '@cairn/engine';
import { FLEET_BACKEND, startFleet, waitFor, type Fleet } from '../fleet/fleet.js';

/** The model every worker runs (`CAIRN_MODEL`): Chat Completions on the fake provider. */
export const SPEND_MODEL = 'gpt-b';

/**
 * 1,000 USD per million tokens (a tenth of a cent a token): a researcher
 * run's five requests cost about $0.23, $0.31, $0.39, $0.47 and $0.58 on the fake provider, $1.98 in all.
 */
export const PRICES = JSON.stringify({
  [`openai-chat:${SPEND_MODEL}`]: { input_per_mtok: 1000, output_per_mtok: 1000 },
});

/** A fleet whose workers run the research team on a fake OpenAI provider that bills tokens, at {@link PRICES}. */
export interface SpendFleet {
  fleet: Fleet;
  /** The provider: `quota.tokens(SPEND_MODEL)` is what it billed. */
  server: FakeOpenAIServer;
  /** In front of the provider: holds the model requests of a chosen run until released. */
  gate: RequestGate;
  /** The workers' environment (model, provider, prices and `env`). */
  workerEnv: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts the provider (each answer taking `latencyMs`) and a fleet with no worker yet. */
export async function startSpendFleet(
  options: { latencyMs?: number; toolDelayMs?: number; env?: Record<string, string> } = {},
): Promise<SpendFleet> {
  const server = await startFakeOpenAIServer({
    decide: researchTeamScript,
    latencyMs: options.latencyMs ?? 0,
    // No limits: the quota's ledger is the provider's bill of the model's tokens.
    quota: { perModel: { [SPEND_MODEL]: {} } },
  });
  const gate = await startRequestGate(server.url);
  const workerEnv = {
    CAIRN_MODEL: `openai-chat:${SPEND_MODEL}`,
    OPENAI_BASE_URL: gate.url,
    CAIRN_MODEL_PRICES: PRICES,
    ...options.env,
  };
  // The client stamps runs with the definition the workers run: the team on the model CAIRN_MODEL names.
  const model = modelFromSpec({ model: workerEnv.CAIRN_MODEL, openaiBaseUrl: server.url });
  const fleet = await startFleet({
    backend: FLEET_BACKEND,
    registry: createRegistry({ model }),
    toolDelayMs: options.toolDelayMs ?? 300,
  });
  return {
    fleet,
    server,
    gate,
    workerEnv,
    stop: async () => {
      await fleet.stop();
      await gate.close();
      await server.close();
    },
  };
}

/** A pass-through in front of the provider that can hold back the requests of one run. */
export interface RequestGate {
  /** Base URL for the workers' `OPENAI_BASE_URL`. */
  readonly url: string;
  /** From now on, holds every request whose body contains `marker` (a run's input) until {@link release}. */
  hold(marker: string): void;
  /** How many requests are held now. */
  held(): number;
  /** Lets the held requests (and every later one) through to the provider. */
  release(): void;
  close(): Promise<void>;
}

async function startRequestGate(providerUrl: string): Promise<RequestGate> {
  const provider = new URL(providerUrl);
  let marker: string | undefined;
  let held = 0;
  let open: () => void = () => undefined;
  let opened = Promise.resolve();
  const proxy = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      if (marker !== undefined && body.includes(marker)) {
        held += 1;
        await opened;
        held -= 1;
      }
      const out = request(
        {
          host: provider.hostname,
          port: provider.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      out.end(body);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${provider.pathname}`,
    hold: (value) => {
      marker = value;
      opened = new Promise((resolve) => (open = resolve));
    },
    held: () => held,
    release: () => {
      marker = undefined;
      open();
    },
    close: () => {
      open();
      proxy.closeAllConnections();
      return new Promise((resolve) => proxy.close(() => resolve()));
    },
  };
}

/** An HTTP answer: status, `Retry-After` and the JSON body. */
export interface Answer {
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
}

/** POSTs `body` as JSON to the producer at `baseUrl`, with `key` as its bearer key when given. */
export async function post(
  baseUrl: string,
  path: string,
  body: unknown,
  key?: string,
): Promise<Answer> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(key !== undefined && { Authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

/** Waits until the run is PAUSED with one pending budget action, and returns it. */
export async function budgetPaused(fleet: Fleet, runId: string): Promise<PendingActionRecord> {
  let action: PendingActionRecord | undefined;
  await waitFor(
    async () => {
      if ((await fleet.store.getRun(runId))?.status !== 'PAUSED') return false;
      const actions = await fleet.client.listPendingActions(runId);
      action = actions.length === 1 && actions[0]!.kind === 'budget' ? actions[0] : undefined;
      return action !== undefined;
    },
    40_000,
    `run ${runId} PAUSED with a budget action`,
  );
  return action!;
}

/** Today, UTC, as the store names days. */
export function utcToday(): string {
  return new Date().toISOString().slice(0, 10);
}

/** Seconds until the next UTC midnight by this machine's clock. */
export function secondsToNextUtcDay(): number {
  return (Date.parse(`${utcToday()}T00:00:00Z`) + 86_400_000 - Date.now()) / 1000;
}

/** Integer micro-dollars of a USD amount. */
export const micro = (usd: number) => Math.round(usd * 1_000_000);
