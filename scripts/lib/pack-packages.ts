import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '@cairn/services';

const run = promisify(execFile);

/** The packages an app installs to use Cairn, by workspace folder. */
export const PUBLISHED_PACKAGES = [
  'packages/engine',
  'packages/store',
  'packages/runtime',
  'packages/queue',
  'packages/client',
  'apps/worker',
  'apps/producer',
] as const;

/** Options of {@link packPackages}. */
export interface PackOptions {
  /** Remove earlier build output first, so that no file of a deleted source ends up in a tarball. @defaultValue true */
  clean?: boolean;
  /**
   * Type-check while compiling. Without it (`tsc --noCheck`) the same files are emitted in less
   * than half the CPU time, for a caller whose type check runs elsewhere (`npm run typecheck`).
   * @defaultValue true
   */
  check?: boolean;
}

/** Compiles the published packages (one `tsc -b`) and `npm pack`s each into `destination`; returns the tarball paths. */
export async function packPackages(
  destination: string,
  options: PackOptions = {},
): Promise<string[]> {
  const out = resolve(destination);
  mkdirSync(out, { recursive: true });
  const tsc = join(REPO_ROOT, 'node_modules/typescript/bin/tsc');
  if (options.clean ?? true)
    await run(process.execPath, [tsc, '-b', '--clean', ...PUBLISHED_PACKAGES], { cwd: REPO_ROOT });
  const noCheck = options.check === false ? ['--noCheck'] : [];
  // tsc prints its errors on stdout, which a failed execFile's message leaves out: put them in it.
  await run(process.execPath, [tsc, '-b', ...noCheck, ...PUBLISHED_PACKAGES], {
    cwd: REPO_ROOT,
  }).catch((error: Error & { stdout?: string }) => {
    throw new Error(`tsc -b failed:\n${error.stdout ?? ''}`, { cause: error });
  });
  const args = [
    'pack',
    '--json',
    '--ignore-scripts',
    '--pack-destination',
    out,
    ...PUBLISHED_PACKAGES.flatMap((p) => ['-w', p]),
  ];
  const { stdout } = await run('npm', args, { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 });
  const packed = JSON.parse(stdout.slice(stdout.indexOf('['))) as { filename: string }[];
  return packed.map((p) => join(out, p.filename));
}
