import { readFile } from 'node:fs/promises';

/** Resident set size and its high-water mark of a process, in MB, from /proc (Linux). */
export async function procMemoryMb(pid: number): Promise<{ rss: number; hwm: number } | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) =>
      Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Samples a value every `everyMs` until `stop()`; returns the maximum seen. */
export function sampleMax(
  read: () => Promise<number | undefined>,
  everyMs = 20,
): { stop(): Promise<number> } {
  let max = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const value = await read();
      if (value !== undefined && value > max) max = value;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const value = await read();
      return Math.max(max, value ?? 0);
    },
  };
}
