import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@cairn/services';

/** The line that marks the shell block after it as runnable here: offline, in seconds. */
export const RUNNABLE_MARKER = '<!-- runnable -->';

/** The markdown files whose shell blocks users copy: the README and docs/. */
export function docFiles(): string[] {
  const docs = readdirSync(join(REPO_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

/** One `sh`/`bash`/`shell` fenced block of a doc. */
export interface ShellBlock {
  file: string;
  /** The line of its opening fence (1-based). */
  line: number;
  /** What is between the fences. */
  body: string;
  /** Whether {@link RUNNABLE_MARKER} is the line before its fence. */
  runnable: boolean;
}

/** Every shell block of the README and docs/, in file order. */
export function shellBlocks(): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  for (const file of docFiles()) {
    const text = readFileSync(join(REPO_ROOT, file), 'utf8');
    for (const block of text.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
      const before = text.slice(0, block.index).split('\n');
      blocks.push({
        file,
        line: before.length,
        body: block[1]!,
        runnable: before.at(-2)?.trim() === RUNNABLE_MARKER,
      });
    }
  }
  return blocks;
}

/** Each command of a block (continued lines joined, comments dropped). */
export function commandsOf(block: ShellBlock): string[] {
  return block.body
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) =>
      line
        .replace(/\s#\s.*$/, '')
        .replace(/^#.*$/, '')
        .trim(),
    )
    .filter((command) => command !== '');
}
