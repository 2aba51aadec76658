import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { findRedisServer } from './find-redis-server.js';
import { startRedis, type RedisService } from './start-redis.js';
import { testRedisUrl } from './test-redis-url.js';
import { REDIS_SERVER, requires } from './test-requirements.js';

/** Sends one inline command and returns the raw reply line. */
function command(url: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: Number(new URL(url).port) });
    socket.once('error', (error: NodeJS.ErrnoException) => reject(error));
    socket.once('connect', () => socket.write(`${line}\r\n`));
    socket.once('data', (reply) => {
      socket.destroy();
      resolve(reply.toString('utf8'));
    });
  });
}

describe('startRedis', requires(REDIS_SERVER, findRedisServer() !== undefined), () => {
  let redis: RedisService | undefined;
  afterEach(() => redis?.stop());

  it('answers commands on the returned URL and refuses connections after stop', async () => {
    redis = await startRedis({ ignoreEnv: true });
    expect(redis).toMatchObject({ source: 'machine', url: `redis://127.0.0.1:${redis?.port}` });
    expect(await command(redis!.url, 'SET greeting hello')).toBe('+OK\r\n');
    expect(await command(redis!.url, 'GET greeting')).toBe('$5\r\nhello\r\n');

    await redis!.stop();
    await expect(command(redis!.url, 'PING')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('keeps data across a crash and restart on the same port with appendonly', async () => {
    redis = await startRedis({ ignoreEnv: true, appendonly: true });
    await command(redis!.url, 'SET survivor yes');
    const firstPid = redis!.pid;
    await new Promise((resolve) => setTimeout(resolve, 1_200)); // appendfsync everysec

    await redis!.restart({ signal: 'SIGKILL' });
    expect(redis!.pid).not.toBe(firstPid);
    expect(await command(redis!.url, 'GET survivor')).toBe('$3\r\nyes\r\n');
  });

  it('loses data on restart without appendonly (the fast default)', async () => {
    redis = await startRedis({ ignoreEnv: true });
    await command(redis!.url, 'SET ephemeral yes');
    await redis!.restart();
    expect(await command(redis!.url, 'GET ephemeral')).toBe('$-1\r\n');
  });

  it('is started once for the whole test run', async () => {
    expect(await command(testRedisUrl(), 'PING')).toBe('+PONG\r\n');
  });
});
