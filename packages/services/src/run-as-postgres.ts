import { existsSync } from 'node:fs';
import { runCommand, type CommandResult } from './run-command.js';

/** Numeric ids of the `postgres` OS user. */
export interface PostgresUserIds {
  uid: number;
  gid: number;
}

const RUNUSER_PATHS = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'];

/** True when this process runs as root, where Postgres refuses to start unless switched to the `postgres` user. */
export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** The uid and gid of the `postgres` OS user, or undefined when there is no such user. */
export async function postgresUserIds(): Promise<PostgresUserIds | undefined> {
  const [uid, gid] = await Promise.all([
    runCommand('id', ['-u', 'postgres']),
    runCommand('id', ['-g', 'postgres']),
  ]);
  if (uid.code !== 0 || gid.code !== 0) return undefined;
  return { uid: Number.parseInt(uid.output, 10), gid: Number.parseInt(gid.output, 10) };
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The command line that runs `file args` as the `postgres` user when root (through runuser, else su), or unchanged otherwise. */
export function asPostgres(file: string, args: readonly string[]): [string, string[]] {
  if (!isRoot()) return [file, [...args]];
  const runuser = RUNUSER_PATHS.find((path) => existsSync(path));
  if (runuser) return [runuser, ['-u', 'postgres', '--', file, ...args]];
  return ['su', ['postgres', '-s', '/bin/sh', '-c', [file, ...args].map(shellQuote).join(' ')]];
}

/** Runs a command as the `postgres` user when root (as the current user otherwise) and returns its exit code and output. */
export function runAsPostgres(file: string, args: readonly string[]): Promise<CommandResult> {
  const [command, commandArgs] = asPostgres(file, args);
  return runCommand(command, commandArgs, { ...process.env, LC_ALL: 'C' });
}
