import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './child.js';

/** The peers' own package (not a workspace), installed on first use. */
export const PEERS_DIR = join(REPO_ROOT, 'bench/peers');

/** A package each peer needs, by peer name. */
const MARKERS: Record<string, string> = {
  dbos: '@dbos-inc/dbos-sdk',
  langgraph: '@langchain/langgraph-checkpoint-postgres',
};

function installed(): boolean {
  return Object.values(MARKERS).every((pkg) =>
    existsSync(join(PEERS_DIR, 'node_modules', pkg, 'package.json')),
  );
}

/** Installs bench/peers with `npm install --prefix bench/peers` unless already there; resolves to the failure reason, or undefined when ready. */
export async function ensurePeersInstalled(
  log: (message: string) => void,
): Promise<string | undefined> {
  if (installed()) return undefined;
  log('installing peers: npm install --prefix bench/peers (first use)');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const outcome = await new Promise<string | undefined>((resolve) => {
    const child = spawn(npm, ['install', '--prefix', PEERS_DIR, '--no-audit', '--no-fund'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    child.on('error', (error) => resolve(`npm could not start: ${error.message}`));
    child.on('close', (code) =>
      resolve(
        code === 0
          ? undefined
          : `npm install failed (exit ${code}): ${stderr.trim().split('\n').slice(-3).join(' ')}`,
      ),
    );
  });
  if (outcome) return outcome;
  return installed() ? undefined : 'npm install finished but the peer packages are missing';
}
