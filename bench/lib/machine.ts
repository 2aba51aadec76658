import { execFileSync } from 'node:child_process';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import pg from 'pg';
import { findRedisServer } from '@cairn/services';

/** The machine a benchmark ran on. */
export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
  postgres?: string;
  redis?: string;
  /** 1-minute load average when the report was written (the machine may be shared). */
  loadAverage: number;
}

async function postgresVersion(url: string | undefined): Promise<string | undefined> {
  if (!url) return undefined;
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query<{ v: string }>(
      "SELECT current_setting('server_version') AS v",
    );
    return rows[0]?.v;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function redisVersion(): string | undefined {
  const binary = findRedisServer();
  if (!binary) return undefined;
  try {
    return /v=(\S+)/.exec(execFileSync(binary, ['--version'], { encoding: 'utf8' }))?.[1];
  } catch {
    return undefined;
  }
}

/** Describes this machine (and the Postgres at `postgresUrl`, when given). */
export async function machineInfo(postgresUrl?: string): Promise<MachineInfo> {
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    os: `${type()} ${release()}`,
    node: process.version,
    postgres: await postgresVersion(postgresUrl),
    redis: redisVersion(),
    loadAverage: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}
