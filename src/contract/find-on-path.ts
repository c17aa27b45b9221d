// Whether a program can be run: on PATH, or in the sbin directories root's PATH may lack (ip, iptables,
// containerd live there on Debian).
import { access, constants } from 'node:fs/promises';

export async function findOnPath(command: string): Promise<boolean> {
  const dirs = (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin']);
  for (const dir of dirs) {
    try {
      await access(`${dir}/${command}`, constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}
