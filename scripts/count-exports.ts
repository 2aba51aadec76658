/**
 * `node --import tsx --conditions=source scripts/count-exports.ts [--names]`:
 * counts the names each published entry point exports (every subpath in a
 * package's `exports`, resolved to its `source` file), read with the
 * TypeScript compiler, so a change to an entry point can say what it adds
 * or removes. `--names` lists the names too.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

interface Entry {
  readonly specifier: string;
  readonly file: string;
}

const root = resolve(import.meta.dirname, '..');
const listNames = process.argv.includes('--names');

/** Every `exports` subpath of every package under packages/, with its source file. */
function entries(): Entry[] {
  const found: Entry[] = [];
  for (const dir of readdirSync(join(root, 'packages')).sort()) {
    const manifestPath = join(root, 'packages', dir, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
      name: string;
      exports?: Record<string, { source?: string }>;
    };
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (target.source === undefined) continue;
      const specifier = subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
      found.push({ specifier, file: join(root, 'packages', dir, target.source) });
    }
  }
  return found;
}

const list = entries();
const program = ts.createProgram(
  list.map((entry) => entry.file),
  {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    customConditions: ['source'],
    noEmit: true,
    skipLibCheck: true,
  },
);
const checker = program.getTypeChecker();

let total = 0;
for (const entry of list) {
  const source = program.getSourceFile(entry.file);
  const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
  const names =
    moduleSymbol === undefined
      ? []
      : checker.getExportsOfModule(moduleSymbol).map((symbol) => symbol.name);
  names.sort();
  total += names.length;
  console.log(`${String(names.length).padStart(4)}  ${entry.specifier}`);
  if (listNames) console.log(`      ${names.join(', ')}`);
}
console.log(`${String(total).padStart(4)}  total`);
