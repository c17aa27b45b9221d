// Which processes live in which of our named network namespaces: what `ip netns pids NAME` prints,
// found the same way (a process is inside when /proc/PID/ns/net is the inode bound at
// /run/netns/NAME), for every namespace of a lab in one pass over /proc instead of one process each.
import { readdir, stat } from 'node:fs/promises';

/** Namespace path -> pids inside it; namespaces that no longer exist are left out. */
export async function namespacePids(netnsPaths: readonly string[]): Promise<Map<string, number[]>> {
  const byInode = new Map<string, string>();
  await Promise.all(
    netnsPaths.map(async (path) => {
      const s = await stat(path).catch(() => undefined);
      if (s) byInode.set(`${s.dev}:${s.ino}`, path);
    }),
  );
  const found = new Map<string, number[]>();
  if (byInode.size === 0) return found;
  const pids = (await readdir('/proc')).filter((d) => /^\d+$/.test(d));
  await Promise.all(
    pids.map(async (pid) => {
      // a process that ended meanwhile has no ns link any more: skip it
      const s = await stat(`/proc/${pid}/ns/net`).catch(() => undefined);
      const path = s && byInode.get(`${s.dev}:${s.ino}`);
      if (path) found.set(path, [...(found.get(path) ?? []), Number(pid)]);
    }),
  );
  return found;
}

/** SIGKILL, ignoring processes that are already gone. */
export function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}
