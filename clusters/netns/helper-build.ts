// Compiles the lab's C helper programs (the raw-socket packet injector) with gcc once per source
// version; binaries are cached in the checkout (node_modules/.cache), never on the host at large.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat } from 'node:fs/promises';
import { packagePath } from '../../harness/package-root.ts';
import { runCommand } from '../command.ts';

const CACHE = packagePath('node_modules/.cache/netrepro-bin/');

export const HELPERS = ['inject-ahead'] as const;
/** drop-trace is the harness's own (the probe trace), not a `{bin/NAME}` for scenarios. */
export type Helper = (typeof HELPERS)[number] | 'drop-trace';
const LIBS: Partial<Record<Helper, string[]>> = { 'drop-trace': ['-lbpf'] };

export async function helperBinary(name: Helper): Promise<string> {
  const source = packagePath(`clusters/netns/agent/${name}.c`);
  const hash = createHash('sha256').update(await readFile(source)).digest('hex').slice(0, 12);
  const binary = `${CACHE}${name}-${hash}`;
  if (await stat(binary).then(() => true, () => false)) return binary;
  await mkdir(CACHE, { recursive: true });
  const partial = `${binary}.${process.pid}.tmp`; // parallel runs may compile at once: rename is atomic
  await runCommand(['gcc', '-O2', '-Wall', '-Wextra', '-o', partial, source, ...(LIBS[name] ?? [])]);
  await rename(partial, binary);
  return binary;
}
