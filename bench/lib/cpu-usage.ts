import { readdir, readFile } from 'node:fs/promises';

/** Kernel clock ticks per second (USER_HZ), 100 on Linux. */
const TICKS_PER_SECOND = 100;

interface ProcStat {
  ppid: number;
  ticks: number;
  /** CPU of its children that exited and were waited for (a postmaster's ended backends). */
  reapedTicks: number;
}

async function procStat(pid: number): Promise<ProcStat | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15, cutime 16, cstime 17
    return {
      ppid: Number(fields[1]),
      ticks: Number(fields[11]) + Number(fields[12]),
      reapedTicks: Number(fields[13]) + Number(fields[14]),
    };
  } catch {
    return undefined;
  }
}

async function allStats(): Promise<Map<number, ProcStat>> {
  const stats = new Map<number, ProcStat>();
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await procStat(Number(entry));
    if (stat) stats.set(Number(entry), stat);
  }
  return stats;
}

/**
 * Named groups of processes whose CPU time is compared; a root pid includes
 * its children (a postmaster's backends), those that ended meanwhile too,
 * except the `exclude`d ones (the bench's own watching connection).
 */
export type CpuRoles = Record<
  string,
  { pids: number[]; withChildren?: boolean; exclude?: readonly number[] }
>;

/** CPU seconds (user + system) per role, from /proc (Linux): `stop()` returns what each used since `start`. */
export async function startCpuAccounting(
  roles: CpuRoles,
): Promise<{ stop(): Promise<Record<string, number>> }> {
  const sum = (stats: Map<number, ProcStat>) => {
    const out: Record<string, number> = {};
    for (const [name, role] of Object.entries(roles)) {
      const pids = new Set(role.pids);
      // A child that exits takes its ticks with it; its parent's reaped ticks gain them.
      const reaped = role.withChildren
        ? role.pids.reduce((t, pid) => t + (stats.get(pid)?.reapedTicks ?? 0), 0)
        : 0;
      if (role.withChildren) for (const [pid, s] of stats) if (pids.has(s.ppid)) pids.add(pid);
      for (const pid of role.exclude ?? []) pids.delete(pid);
      out[name] = [...pids].reduce((t, pid) => t + (stats.get(pid)?.ticks ?? 0), reaped);
    }
    return out;
  };
  const before = sum(await allStats());
  return {
    stop: async () => {
      const after = sum(await allStats());
      return Object.fromEntries(
        Object.keys(roles).map((name) => [
          name,
          ((after[name] ?? 0) - (before[name] ?? 0)) / TICKS_PER_SECOND,
        ]),
      );
    },
  };
}
