// Where netrepro keeps what it can rebuild: the user's cache directory, not its own install folder (which
// may be read-only, shared, or wiped by the next `npm ci`). NETREPRO_CACHE moves all of it.
import { homedir } from 'node:os';
import { join } from 'node:path';

/** `${NETREPRO_CACHE:-~/.cache/netrepro}` (as the build scripts read it), and `parts` below it. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env, ...parts: string[]): string {
  return join(env.NETREPRO_CACHE || join(homedir(), '.cache', 'netrepro'), ...parts);
}
