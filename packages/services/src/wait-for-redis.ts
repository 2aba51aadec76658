import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

function ping(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(2_000, () => socket.destroy(new Error('PING timed out')));
    socket.once('error', reject);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (reply) => {
      socket.destroy();
      resolve(reply.toString('utf8').trim());
    });
  });
}

/** Resolves once Redis on 127.0.0.1:`port` answers PING with PONG (not LOADING); rejects after `timeoutMs` or when `isDead()` turns true. */
export async function waitForRedis(
  port: number,
  isDead: () => boolean,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (isDead()) throw new Error('redis-server exited');
    try {
      last = await ping(port);
      if (last === '+PONG') return;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) throw new Error(`redis not ready after ${timeoutMs} ms: ${last}`);
    await sleep(25);
  }
}
