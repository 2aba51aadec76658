import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CAIRN_ENV_VARIABLES } from '@cairn/runtime';
import { REPO_ROOT } from '@cairn/services';
import { expect, it } from 'vitest';

/** Folders whose code ships or runs as Cairn (the services package only starts test servers). */
const CODE_ROOTS = [
  'packages/engine/src',
  'packages/store/src',
  'packages/queue/src',
  'packages/runtime/src',
  'packages/client/src',
  'apps',
  'examples',
];
/** Read by the system, not by Cairn. */
const NOT_CAIRNS = new Set(['PATH', 'HOME', 'NODE_ENV']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist' || name === 'test-support') return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

/** `process.env.X` and `process.env['X']` in code, comments left out. */
function variablesReadDirectly(): Set<string> {
  const found = new Set<string>();
  for (const file of CODE_ROOTS.flatMap((root) => sourceFiles(join(REPO_ROOT, root)))) {
    const code = readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
      .join('\n');
    for (const match of code.matchAll(
      /process\.env(?:\.([A-Z][A-Z0-9_]*)|\[['"]([A-Z][A-Z0-9_]*)['"]\])/g,
    )) {
      const name = match[1] ?? match[2]!;
      if (!NOT_CAIRNS.has(name)) found.add(name);
    }
  }
  return found;
}

/** The backticked names in the first column of docs/configuration.md's table. */
function documentedVariables(): Set<string> {
  const page = readFileSync(join(REPO_ROOT, 'docs/configuration.md'), 'utf8');
  const section = page.split(/^## /m).find((s) => s.startsWith('Configuration'));
  if (!section) throw new Error('docs/configuration.md has no "## Configuration" section');
  const names = section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!));
  return new Set(names);
}

it('the configuration table (docs/configuration.md) lists every variable the code reads, and only those', () => {
  const read = new Set([...CAIRN_ENV_VARIABLES, ...variablesReadDirectly()]);
  const documented = documentedVariables();
  expect(
    [...read].filter((name) => !documented.has(name)).sort(),
    'read by the code, missing from the table',
  ).toEqual([]);
  expect(
    [...documented].filter((name) => !read.has(name)).sort(),
    'in the table, read by no code',
  ).toEqual([]);
});
