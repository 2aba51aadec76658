import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterEach, describe, expect, it } from 'vitest';
import { openProducerFixture, type ProducerFixture } from '../test-support/producer-fixture.js';
import { API_REFERENCE_PATH } from './api-reference-page.js';
import type { OpenApiDocument } from './openapi-document.js';

let fx: ProducerFixture;

afterEach(async () => {
  await fx.close();
});

async function fetchDocument(): Promise<OpenApiDocument> {
  const res = await fx.app.request('/openapi.json');
  expect(res.status).toBe(200);
  return (await res.json()) as OpenApiDocument;
}

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return Promise.resolve(
    fx.app.request(path, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', ...headers },
    }),
  );
}

/** One real answer of the app: its operation, status and JSON body (undefined for none or a stream). */
interface RecordedAnswer {
  operationId: string;
  status: number;
  body: unknown;
}

/**
 * Checks an answer against the document: its status is one the operation lists, its media type the
 * one listed, and a JSON body validates against the listed schema (ajv, JSON Schema 2020-12).
 */
function answerChecker(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(doc, 'openapi.json');
  const operations = new Map(
    Object.values(doc.paths).flatMap((methods) =>
      Object.values(methods).map((op) => [op.operationId, op] as const),
    ),
  );
  const recorded: RecordedAnswer[] = [];
  return {
    recorded,
    async check(operationId: string, res: Response): Promise<unknown> {
      const op = operations.get(operationId);
      expect(op, operationId).toBeDefined();
      const listed = op!.responses[String(res.status)];
      expect(
        listed,
        `${operationId} answered ${res.status}, which the document does not list`,
      ).toBeDefined();
      const [mediaType, media] = Object.entries(listed!.content ?? {})[0] ?? [];
      if (mediaType === undefined) {
        expect(await res.text()).toBe('');
        recorded.push({ operationId, status: res.status, body: undefined });
        return undefined;
      }
      expect(res.headers.get('Content-Type') ?? '').toContain(mediaType);
      if (mediaType !== 'application/json') {
        await res.text();
        recorded.push({ operationId, status: res.status, body: undefined });
        return undefined;
      }
      const body: unknown = await res.json();
      const ref = (media!.schema as { $ref: string }).$ref;
      const validate = ajv.getSchema(`openapi.json${ref}`)!;
      expect(
        validate(body),
        `${operationId} ${res.status}: ${ajv.errorsText(validate.errors)}`,
      ).toBe(true);
      recorded.push({ operationId, status: res.status, body });
      return body;
    },
  };
}

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** Type-checks `files` (written to a temporary folder) with the repository's compiler options; answers tsc's messages. */
async function typeCheck(files: Record<string, string>): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-openapi-'));
  try {
    await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    // The repository's own compiler options (tsconfig.check.json), so the check resolves and reads types as `npx tsc` does.
    const config = ts.readConfigFile(join(REPO_ROOT, 'tsconfig.check.json'), ts.sys.readFile);
    const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, REPO_ROOT);
    const paths = Object.keys(files).map((name) => join(dir, name));
    const program = ts.createProgram(paths, { ...options, noEmit: true });
    // Only what the generated client and the answers say: the repository's own files are `npx tsc`'s to check.
    return paths
      .flatMap((path) => ts.getPreEmitDiagnostics(program, program.getSourceFile(path)))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document (a published validator)', async () => {
    fx = await openProducerFixture();
    const doc = await fetchDocument();
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents exactly the /v1 routes the app registers', async () => {
    fx = await openProducerFixture();
    const doc = await fetchDocument();
    const registered = new Set(
      fx.app.routes
        .filter((r) => r.path.startsWith('/v1/') && r.method !== 'ALL')
        .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`),
    );
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
      ),
    );
    expect([...documented].sort()).toEqual([...registered].sort());
    for (const methods of Object.values(doc.paths))
      for (const op of Object.values(methods)) {
        expect(op.responses['401'], op.operationId).toBeDefined();
        expect(doc.security).toEqual([{ apiKey: [] }]);
      }
  });

  it("describes the routes' real answers: each validates, and a client generated by openapi-typescript type-checks against them", async () => {
    fx = await openProducerFixture();
    const doc = await fetchDocument();
    const answers = answerChecker(doc);
    const check = answers.check.bind(answers);

    const created = (await check(
      'createTeamRun',
      await post(
        '/v1/teams/research-team/runs',
        { input: 'Research X', session_id: 'docs' },
        {
          'Idempotency-Key': 'docs-1',
        },
      ),
    )) as { run_id: string };
    await check(
      'createTeamRun',
      await post(
        '/v1/teams/research-team/runs',
        { input: 'Research X', session_id: 'docs' },
        {
          'Idempotency-Key': 'docs-1',
        },
      ),
    );
    await check('createAgentRun', await post('/v1/agents/no-such-agent/runs', { input: 'x' }));
    await check('createAgentRun', await post('/v1/agents/researcher/runs', { input: 1 }));
    await fx.complete(created.run_id, 'done');
    await check('getRun', await fx.app.request(`/v1/runs/${created.run_id}`));
    await check('getRun', await fx.app.request('/v1/runs/no-such-run'));
    await check('forkRun', await post(`/v1/runs/${created.run_id}/fork`, { input: 'and then?' }));
    await check(
      'continueRun',
      await post(`/v1/runs/${created.run_id}/continue`, { input: 'more' }),
    );
    await check('runEvents', await fx.app.request(`/v1/runs/${created.run_id}/events`));
    await check('runEvents', await fx.app.request(`/v1/runs/${created.run_id}/events?after=x`));
    const other = (await check(
      'createAgentRun',
      await post('/v1/agents/researcher/runs', { input: 'Research Y' }),
    )) as { run_id: string; session_id: string };
    await check(
      'decideRun',
      await post(`/v1/runs/${other.run_id}/decisions`, {
        decisions: [{ action_id: 'no-such-action', type: 'approve' }],
      }),
    );
    await check('continueRun', await post(`/v1/runs/${other.run_id}/continue`, {}));
    // A queued run is suspended at once; again, it is already; a finished one is refused.
    await check('suspendRun', await post(`/v1/runs/${other.run_id}/suspend`, {}));
    await check('suspendRun', await post(`/v1/runs/${other.run_id}/suspend`, { now: true }));
    await check('suspendRun', await post(`/v1/runs/${created.run_id}/suspend`, {}));
    await check('suspendRun', await post(`/v1/runs/${other.run_id}/suspend`, { now: 'yes' }));
    await check('resumeRun', await post(`/v1/runs/${other.run_id}/resume`, {}));
    await check('resumeRun', await post(`/v1/runs/${other.run_id}/resume`, {}));
    await check('resumeRun', await post('/v1/runs/no-such-run/resume', {}));
    await check('cancelRun', await post(`/v1/runs/${other.run_id}/cancel`, {}));
    await check('getSession', await fx.app.request('/v1/sessions/docs'));
    await check('deleteSession', await fx.app.request('/v1/sessions/nobody', { method: 'DELETE' }));
    await check(
      'deleteSession',
      await fx.app.request(`/v1/sessions/${other.session_id}`, { method: 'DELETE' }),
    );

    const statuses = answers.recorded.map((a) => `${a.operationId} ${a.status}`);
    expect(statuses).toEqual(
      expect.arrayContaining([
        'createTeamRun 202',
        'createTeamRun 200',
        'createAgentRun 404',
        'createAgentRun 400',
        'getRun 200',
        'getRun 404',
        'forkRun 201',
        'continueRun 409',
        'continueRun 202',
        'runEvents 200',
        'runEvents 400',
        'decideRun 404',
        'suspendRun 202',
        'suspendRun 409',
        'suspendRun 400',
        'resumeRun 200',
        'resumeRun 404',
        'cancelRun 202',
        'getSession 200',
        'deleteSession 404',
        'deleteSession 204',
      ]),
    );

    // The generated client's types, checked by tsc against each answer as the app sent it, and against the server's own types.
    const generated = astToString(await openapiTS(doc as never));
    const producerSrc = join(REPO_ROOT, 'apps/producer/src');
    const answerLines = answers.recorded
      .filter((a) => a.body !== undefined)
      .map(
        (a, i) =>
          `export const answer${i}: operations[${JSON.stringify(a.operationId)}]['responses'][${a.status}]['content']['application/json'] = ${JSON.stringify(a.body)};`,
      );
    const diagnostics = await typeCheck({
      'api.d.ts': generated,
      'answers.ts': [
        "import type { components, operations } from './api.js';",
        `import type { RunView, SessionView } from '${join(REPO_ROOT, 'packages/store/src/run-view.js')}';`,
        `import type { ErrorBody } from '${join(producerSrc, 'http-errors.js')}';`,
        ...answerLines,
        "export const serverRun = (run: RunView): components['schemas']['RunView'] => run;",
        "export const serverSession = (s: SessionView): components['schemas']['SessionView'] => s;",
        "export const serverError = (e: ErrorBody): components['schemas']['ErrorBody'] => e;",
        "export const clientBody: components['schemas']['CreateRunBody'] = { input: 'x', checkpoint: 'tool-call', priority: 1 };",
        // The generated types are strict: an unknown status or field is an error (an unused @ts-expect-error would be one too).
        '// @ts-expect-error: not a run status',
        "export const badStatus: components['schemas']['CreatedRun'] = { run_id: 'r', session_id: 's', status: 'DONE' };",
        '// @ts-expect-error: not a field of the body',
        "export const badField: components['schemas']['CreateRunBody'] = { input: 'x', inputs: 'y' };",
        '',
      ].join('\n'),
    });
    expect(diagnostics).toEqual([]);
  });
});

describe('GET /docs/api', () => {
  it('renders every operation of the document on a page that loads nothing from another origin', async () => {
    fx = await openProducerFixture();
    const doc = await fetchDocument();
    const res = await fx.app.request(API_REFERENCE_PATH);
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toContain('text/html');
    expect(res.headers.get('Content-Security-Policy')).toContain("default-src 'self'");
    const html = await res.text();
    for (const methods of Object.values(doc.paths))
      for (const op of Object.values(methods)) expect(html).toContain(`id="${op.operationId}"`);
    for (const name of Object.keys(doc.components.schemas))
      expect(html).toContain(`id="schema-${name}"`);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).not.toContain('<script');
  });

  it('needs a key like the rest of the API, and sends a browser without a session to sign in', async () => {
    fx = await openProducerFixture({ apiKeys: ['admin-key'] });
    expect((await fx.app.request('/openapi.json')).status).toBe(401);
    const withKey = await fx.app.request('/openapi.json', {
      headers: { Authorization: 'Bearer admin-key' },
    });
    expect(withKey.status).toBe(200);
    const page = await fx.app.request(API_REFERENCE_PATH, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(303);
    expect(page.headers.get('Location')).toBe(
      `/ui/login?next=${encodeURIComponent(API_REFERENCE_PATH)}`,
    );
  });
});
