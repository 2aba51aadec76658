import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from './repo-root.js';
import type { CairnApp } from './cairn-app.js';
import { TEST_APP_BUNDLE_VAR } from './test-env.js';

/** The compiled apps of a test run: for each app its entry script and, by `CAIRN_REGISTRY` value, the compiled registry module to give it instead. */
export type TestAppBundle = Record<
  CairnApp,
  {
    script: string;
    /** Keys: a registry package name or an absolute file path; `''` is the apps' default registry (no `CAIRN_REGISTRY`). */
    registries: Record<string, string>;
  }
>;

/**
 * The compiled script and `CAIRN_REGISTRY` to start `app` with, when the test
 * run has compiled apps (`CAIRN_TEST_APP_BUNDLE`) holding the registry that
 * `registry` names (a package name, a file path or a `file:` URL; undefined
 * for the default). Undefined otherwise: the app starts from its sources.
 */
export function compiledAppFor(
  app: CairnApp,
  registry: string | undefined,
): { script: string; registry: string } | undefined {
  const published = process.env[TEST_APP_BUNDLE_VAR];
  if (!published) return undefined;
  const compiled = (JSON.parse(published) as TestAppBundle)[app];
  const module = compiled?.registries[registryKey(registry)];
  return module && existsSync(compiled.script)
    ? { script: compiled.script, registry: module }
    : undefined;
}

function registryKey(registry: string | undefined): string {
  if (!registry) return '';
  if (registry.startsWith('file:')) return fileURLToPath(registry);
  if (isAbsolute(registry) || registry.startsWith('.')) return resolve(REPO_ROOT, registry);
  return registry;
}
