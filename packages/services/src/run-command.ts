import { spawn } from 'node:child_process';

/** What a finished command returned: its exit code (null when killed) and its stdout and stderr interleaved. */
export interface CommandResult {
  code: number | null;
  output: string;
}

/** Runs a command to completion without a shell and returns its exit code and output; never throws on a non-zero exit. */
export function runCommand(
  file: string,
  args: readonly string[],
  env?: NodeJS.ProcessEnv,
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
    let output = '';
    const append = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
    };
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}
