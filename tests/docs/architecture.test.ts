import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_TRANSITIONS } from '@cairn/engine/store';
import { REPO_ROOT } from '@cairn/services';
import { expect, it } from 'vitest';

/** `RUN_TRANSITIONS` as the table docs/architecture.md shows it. */
function transitionsTable(): string {
  const rows = Object.entries(RUN_TRANSITIONS).map(
    ([name, { from, to }]) =>
      `| \`${name}\` | ${from.length === 0 ? '(new run)' : from.join(', ')} | ${to} |`,
  );
  return ['| transition | from | to |', '| --- | --- | --- |', ...rows].join('\n');
}

it("docs/architecture.md's transition table is the lifecycle's RUN_TRANSITIONS, drawn from the code", () => {
  const doc = readFileSync(join(REPO_ROOT, 'docs/architecture.md'), 'utf8');
  const shown = /<!-- transitions:start -->\n([\s\S]*?)\n<!-- transitions:end -->/.exec(doc)?.[1];
  expect(shown, 'the table between the transitions markers (paste the expected one)').toBe(
    transitionsTable(),
  );
});
