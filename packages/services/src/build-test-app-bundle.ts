import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildAppBundle } from './build-worker-bundle.js';
import type { TestAppBundle } from './compiled-app.js';
import { REPO_ROOT } from './repo-root.js';
import type { CairnApp } from './cairn-app.js';

/** The registry the apps load without `CAIRN_REGISTRY` (the runtime's default). */
const DEFAULT_REGISTRY_PACKAGE = '@cairn/research-team';

/** Registry modules the test scenarios give their apps, by `CAIRN_REGISTRY` value: the example packages, and every `tests/**\/*-registry.ts`. */
function registrySources(): Record<string, string> {
  const sources: Record<string, string> = {};
  const examples = join(REPO_ROOT, 'examples');
  for (const dir of existsSync(examples) ? readdirSync(examples) : []) {
    const manifest = join(examples, dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as {
      name?: string;
      exports?: { '.'?: { source?: string } };
    };
    const source = pkg.exports?.['.']?.source;
    if (pkg.name && source) sources[pkg.name] = join(examples, dir, source);
  }
  const tests = join(REPO_ROOT, 'tests');
  for (const file of existsSync(tests)
    ? readdirSync(tests, { recursive: true, encoding: 'utf8' })
    : []) {
    if (file.endsWith('-registry.ts') && !file.split(/[\\/]/).includes('node_modules'))
      sources[join(tests, file)] = join(tests, file);
  }
  return sources;
}

/** Where each app's bundle goes: under a git-ignored `.cairn/`; the producer's two levels under `apps/producer`, where its code finds its assets. */
function outDirOf(app: CairnApp, id: string): string {
  return app === 'producer'
    ? join(REPO_ROOT, 'apps/producer/.cairn', `test-producer-${id}`)
    : join(REPO_ROOT, '.cairn', `test-worker-${id}`);
}

/**
 * Compiles the worker and the producer once for a whole test run, each with
 * every registry the scenarios use ({@link buildAppBundle}), so that each
 * process a test spawns starts from plain JavaScript instead of compiling the
 * sources through tsx (the worker again in its execution thread). The
 * third-party packages are bundled too: a worker then starts in under a
 * second of CPU, where loading them from node_modules took about two.
 * Returns what to publish as `CAIRN_TEST_APP_BUNDLE`, and the removal of the
 * compiled files.
 */
export async function buildTestAppBundle(): Promise<{ bundle: TestAppBundle; remove(): void }> {
  const id = randomBytes(4).toString('hex');
  const sources = registrySources();
  const keys = Object.keys(sources);
  const entries = Object.fromEntries(keys.map((key, i) => [`registry-${i}`, sources[key]!]));
  const apps = ['worker', 'producer'] as const satisfies readonly CairnApp[];
  const remove = () =>
    apps.forEach((app) => rmSync(outDirOf(app, id), { recursive: true, force: true }));
  try {
    const built = await Promise.all(
      apps.map((app) =>
        buildAppBundle({
          app,
          outDir: outDirOf(app, id),
          registryEntries: entries,
          dependencies: 'bundled',
        }),
      ),
    );
    const bundle = Object.fromEntries(
      apps.map((app, i) => {
        const registries = Object.fromEntries(
          keys.map((key, k) => [key, built[i]!.registries[`registry-${k}`]!]),
        );
        if (registries[DEFAULT_REGISTRY_PACKAGE])
          registries[''] = registries[DEFAULT_REGISTRY_PACKAGE];
        return [app, { script: built[i]!.script, registries }];
      }),
    ) as TestAppBundle;
    return { bundle, remove };
  } catch (error) {
    remove();
    throw error;
  }
}
