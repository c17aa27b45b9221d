// Compiles our BPF C sources with clang once per source version; objects are cached in the
// checkout (node_modules/.cache), never on the host at large.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat } from 'node:fs/promises';
import { packagePath } from '../../harness/package-root.ts';
import { runCommand } from '../command.ts';

const CACHE = packagePath('node_modules/.cache/netrepro-bpf/');

export async function bpfObject(name: 'masquerade' | 'sock-lb' | 'drop-trace'): Promise<string> {
  const source = packagePath(`clusters/netns/bpf/${name}.c`);
  const hash = createHash('sha256').update(await readFile(source)).digest('hex').slice(0, 12);
  const object = `${CACHE}${name}-${hash}.o`;
  if (await stat(object).then(() => true, () => false)) return object;
  await mkdir(CACHE, { recursive: true });
  const partial = `${object}.${process.pid}.tmp`; // parallel runs may compile at once: rename is atomic
  await runCommand(['clang', '-O2', '-g', '-Wall', '-target', 'bpf', '-I/usr/include/x86_64-linux-gnu', '-c', source, '-o', partial]);
  await rename(partial, object);
  return object;
}
