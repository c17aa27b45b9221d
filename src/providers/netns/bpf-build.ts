// Compiles our BPF C sources with clang once per source version (build-cache.ts).
import { cacheDir } from '../../model/cache-dir.ts';
import { packagePath } from '../../model/package-root.ts';
import { runCommand } from '../../contract/command.ts';
import { cachedBuild } from '../namespaces/build-cache.ts';

export function bpfObject(name: 'masquerade' | 'sock-lb' | 'drop-trace'): Promise<string> {
  const source = packagePath(`src/providers/netns/bpf/${name}.c`);
  return cachedBuild(`${cacheDir(process.env, 'bpf')}/`, name, source, '.o', (output) =>
    runCommand([
      'clang',
      '-O2',
      '-g',
      '-Wall',
      '-target',
      'bpf',
      '-I/usr/include/x86_64-linux-gnu',
      '-c',
      source,
      '-o',
      output,
    ]),
  );
}
