/**
 * The shell blocks of the README and docs/ name only what exists: every
 * `npm run` script, every test file given to `npx vitest run`, every `npx`
 * bin of Cairn's own, and every route a `curl` calls on the producer (by its
 * method, checked against the OpenAPI document the routes are built from).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from '@cairn/services';
import { expect, it } from 'vitest';
import { openApiDocument } from '../../apps/producer/src/openapi/openapi-document.js';
import { commandsOf, docFiles, shellBlocks } from './shell-blocks.js';

/** Each command of each shell block, with where it is. */
function shellCommands(): { file: string; command: string }[] {
  return shellBlocks().flatMap((block) =>
    commandsOf(block).map((command) => ({ file: block.file, command })),
  );
}

/** The simple commands of a line: split at `&&`, `;`, `|` and `&`, subshell parentheses dropped. */
function simpleCommands(line: string): string[] {
  return line
    .split(/&&|;|\|\|?|&(?!\w)/)
    .map((part) => part.replace(/^[\s(]+|[\s)]+$/g, ''))
    .filter(Boolean);
}

const rootScripts = Object.keys(
  (
    JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts,
);

/** `{run_id}` in a documented path matches any one segment. */
function routeMatches(template: string, path: string): boolean {
  const pattern = template.replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${pattern}$`).test(path);
}

const documentedRoutes = Object.entries(openApiDocument().paths).flatMap(([path, operations]) =>
  Object.keys(operations as object).map((method) => ({ method: method.toUpperCase(), path })),
);

/** A `curl` to the producer: its method and path (query dropped). */
function curlRoute(command: string): { method: string; path: string } | undefined {
  const url = /localhost:\d+(\/v1\/[^\s'"?]*)/.exec(command);
  if (!url) return undefined;
  const method =
    /-X\s?([A-Z]+)/.exec(command)?.[1] ?? (/\s-d\s|--data/.test(command) ? 'POST' : 'GET');
  return { method, path: url[1]! };
}

it('the shell blocks of the README and docs/ name npm scripts, test files, bins and routes that exist', () => {
  const commands = shellCommands();
  expect(commands.length).toBeGreaterThan(40);
  const problems: string[] = [];
  let routesChecked = 0;
  for (const { file, command } of commands) {
    for (const simple of simpleCommands(command)) {
      const script = /^npm run ([\w:-]+)/.exec(simple)?.[1];
      if (script !== undefined && !rootScripts.includes(script))
        problems.push(`${file}: npm script "${script}" does not exist (${simple})`);
      const testFile = /^npx vitest run ([^\s-][^\s]*)/.exec(simple)?.[1];
      if (testFile !== undefined) {
        try {
          readFileSync(join(REPO_ROOT, testFile));
        } catch {
          problems.push(`${file}: test file ${testFile} does not exist`);
        }
      }
      if (/^npx cairn-/.test(simple)) {
        const bin = simple.split(/\s/)[1]!;
        const store = JSON.parse(
          readFileSync(join(REPO_ROOT, 'packages/store/package.json'), 'utf8'),
        ) as { bin: Record<string, string> };
        if (!(bin in store.bin)) problems.push(`${file}: no package has the bin ${bin}`);
      }
    }
    const route = curlRoute(command);
    if (route) {
      routesChecked++;
      if (
        !documentedRoutes.some((r) => r.method === route.method && routeMatches(r.path, route.path))
      )
        problems.push(`${file}: no route ${route.method} ${route.path} (${command})`);
    }
  }
  expect(routesChecked).toBeGreaterThan(10);
  expect(problems).toEqual([]);
});

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to dashes. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');
}

/** The lines of a markdown file outside its code blocks. */
function proseLines(file: string): string[] {
  let inFence = false;
  return readFileSync(join(REPO_ROOT, file), 'utf8')
    .split('\n')
    .filter((line) => {
      if (line.startsWith('```')) inFence = !inFence;
      return !inFence;
    });
}

function anchorsOf(file: string): Set<string> {
  return new Set(
    proseLines(file).flatMap((line) => {
      const heading = /^#{1,6} (.*)$/.exec(line)?.[1];
      return heading === undefined ? [] : [anchorOf(heading)];
    }),
  );
}

it('every relative link of the README and docs/ reaches a file that exists, and its #anchor a heading there', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const file of docFiles()) {
    for (const line of proseLines(file)) {
      for (const [, target] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        checked++;
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const linked = path === '' ? file : join(dirname(file), path);
        if (!existsSync(join(REPO_ROOT, linked))) {
          broken.push(`${file}: ${target} (no file ${linked})`);
          continue;
        }
        if (anchor && linked.endsWith('.md') && !anchorsOf(linked).has(anchor))
          broken.push(`${file}: ${target} (no heading with that anchor)`);
      }
    }
  }
  expect(checked).toBeGreaterThan(50);
  expect(broken).toEqual([]);
});
