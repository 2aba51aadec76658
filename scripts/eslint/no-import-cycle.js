import path from 'node:path';
import ts from 'typescript';

/**
 * `cairn/no-import-cycle`: fails on an import of a module from which a chain of imports leads back to the
 * importing file, counting every kind of import: `import type`, `export ... from`, `import()` in code and in
 * types. (`import-x/no-cycle` skips type-only imports, so a circle that closes through a type passes it.)
 * Reads the import graph of the files of the type-aware lint's TypeScript program, outside node_modules,
 * once per program, and reports each import whose target lies in the same strongly connected component.
 */
export const noImportCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid import cycles, type-only imports included.' },
    schema: [],
    messages: { cycle: 'Import cycle (type imports count): {{route}}' },
  },
  create(context) {
    const program = context.sourceCode.parserServices?.program;
    if (!program) return {};
    const graph = graphOf(program);
    const file = normalise(context.physicalFilename);
    const component = graph.componentOf.get(file);
    if (component === undefined) return {};
    const check = (node, specifier) => {
      if (typeof specifier !== 'string') return;
      const target = graph.resolve(specifier, file);
      if (target === undefined || target === file || graph.componentOf.get(target) !== component)
        return;
      context.report({
        node,
        messageId: 'cycle',
        data: {
          route: routeOf(graph, target, file)
            .map((f) => path.relative(program.getCurrentDirectory(), f))
            .join(' -> '),
        },
      });
    };
    const fromSource = (node) => node.source && check(node, node.source.value);
    return {
      ImportDeclaration: fromSource,
      ExportNamedDeclaration: fromSource,
      ExportAllDeclaration: fromSource,
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
      TSImportType: (node) => {
        const literal =
          node.argument?.type === 'TSLiteralType' ? node.argument.literal : node.argument;
        if (literal?.type === 'Literal') check(node, literal.value);
      },
    };
  },
};

const graphs = new WeakMap();

function graphOf(program) {
  const known = graphs.get(program);
  if (known) return known;
  const options = program.getCompilerOptions();
  const cache = ts.createModuleResolutionCache(
    program.getCurrentDirectory(),
    (name) => name,
    options,
  );
  const resolved = new Map();
  const resolve = (specifier, from) => {
    const key = `${from}\0${specifier}`;
    if (!resolved.has(key)) {
      const found = ts.resolveModuleName(specifier, from, options, ts.sys, cache).resolvedModule
        ?.resolvedFileName;
      resolved.set(key, found && isOwn(found) ? normalise(found) : undefined);
    }
    return resolved.get(key);
  };
  const edges = new Map();
  for (const source of program.getSourceFiles()) {
    const file = normalise(source.fileName);
    if (!isOwn(file)) continue;
    const targets = new Set();
    for (const specifier of specifiersOf(source)) {
      const target = resolve(specifier, file);
      if (target !== undefined && target !== file) targets.add(target);
    }
    edges.set(file, targets);
  }
  const graph = { edges, resolve, componentOf: components(edges) };
  graphs.set(program, graph);
  return graph;
}

/** Every module specifier a file names: import and export declarations, `import x = require()`, `import()` in code and types. */
function specifiersOf(source) {
  const found = [];
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference)
    ) {
      const expression = node.moduleReference.expression;
      if (ts.isStringLiteral(expression)) found.push(expression.text);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push(node.argument.literal.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument)) found.push(argument.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Tarjan's strongly connected components: file -> component id, for files in a component of two or more. */
function components(edges) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const componentOf = new Map();
  let counter = 0;
  let id = 0;
  const strongConnect = (start) => {
    // Iterative, so a deep import chain cannot overflow the call stack.
    const work = [{ file: start, targets: [...(edges.get(start) ?? [])], next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      if (frame.next < frame.targets.length) {
        const target = frame.targets[frame.next++];
        if (!edges.has(target)) continue;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ file: target, targets: [...(edges.get(target) ?? [])], next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.file, Math.min(low.get(frame.file), index.get(target)));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.file, Math.min(low.get(parent.file), low.get(frame.file)));
      if (low.get(frame.file) !== index.get(frame.file)) continue;
      const members = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        members.push(member);
      } while (member !== frame.file);
      if (members.length > 1) {
        for (const m of members) componentOf.set(m, id);
        id += 1;
      }
    }
  };
  for (const file of edges.keys()) if (!index.has(file)) strongConnect(file);
  return componentOf;
}

/** The shortest import chain from `from` back to `to`, both included. */
function routeOf(graph, from, to) {
  const previous = new Map([[from, undefined]]);
  const queue = [from];
  while (queue.length > 0) {
    const file = queue.shift();
    if (file === to) break;
    for (const target of graph.edges.get(file) ?? []) {
      if (previous.has(target)) continue;
      previous.set(target, file);
      queue.push(target);
    }
  }
  const route = [];
  for (let file = to; file !== undefined; file = previous.get(file)) route.unshift(file);
  return [to, ...route];
}

function isOwn(file) {
  return !file.includes('/node_modules/') && !file.endsWith('.d.ts');
}

function normalise(file) {
  return file.replaceAll('\\', '/');
}
