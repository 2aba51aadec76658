import { PassThrough } from 'node:stream';
import { expect, it } from 'vitest';
import { DemoConsole } from '../../scripts/lib/demo-console.js';

function capture(): { terminal: DemoConsole; text: () => string } {
  const out = new PassThrough();
  const chunks: string[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  return { terminal: new DemoConsole(out), text: () => chunks.join('') };
}

it("keeps the demo's event lines and its streamed model text apart: a line never lands inside the text, the text resumes under its label", () => {
  const { terminal, text } = capture();
  terminal.stream('[live text, message 3]', 'Research ');
  terminal.stream('[live text, message 3]', 'report.\nTop 3');
  terminal.line('[ 11.1s] research-team: RUNNING checkpoint committed');
  terminal.stream('[live text, message 3]', ' results');
  terminal.stream('[live text, message 5]', 'Summary');
  terminal.endStream();
  terminal.line('RESULT');
  expect(text()).toBe(
    [
      '[live text, message 3] Research report.',
      '    Top 3',
      '[ 11.1s] research-team: RUNNING checkpoint committed',
      '[live text, message 3] (cont.)  results',
      '[live text, message 5] Summary',
      'RESULT',
      '',
    ].join('\n'),
  );
});
