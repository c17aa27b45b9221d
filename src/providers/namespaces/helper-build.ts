// Compiles the lab's C helper programs (the raw-socket packet injector, the probe trace's loader, the
// native pod agent, the command spawner) with gcc once per source version (build-cache.ts).
import { cacheDir } from '../../model/cache-dir.ts';
import { packagePath } from '../../model/package-root.ts';
import { runCommand } from '../../contract/command.ts';
import { cachedBuild } from './build-cache.ts';

export const HELPERS = ['inject-ahead'] as const;
/** drop-trace and rcvbuf (the probe trace), pod-agent (the pods' servers and probes), health-check (kube-proxy's service health server) and spawner (every command) are the harness's own, not a `{bin/NAME}` for scenarios. */
export type Helper = (typeof HELPERS)[number] | 'drop-trace' | 'pod-agent' | 'spawner' | 'rcvbuf' | 'health-check';
const LIBS: Partial<Record<Helper, string[]>> = { 'drop-trace': ['-lbpf'] };

export function helperBinary(name: Helper): Promise<string> {
  const source = packagePath(`src/providers/netns/agent/${name}.c`);
  return cachedBuild(`${cacheDir(process.env, 'bin')}/`, name, source, '', (output) =>
    runCommand(['gcc', '-O2', '-Wall', '-Wextra', '-o', output, source, ...(LIBS[name] ?? [])]),
  );
}
