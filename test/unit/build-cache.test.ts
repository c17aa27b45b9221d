// Labs of one process share one compilation; a fresh checkout compiling helpers for two labs at once
// once ran a binary another compile was still writing (exit 126).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cachedBuild } from '../../src/providers/namespaces/build-cache.ts';

const dir = await mkdtemp(join(tmpdir(), 'netrepro-build-cache-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('cachedBuild', () => {
  it('compiles once for concurrent callers and renames the finished file into place', async () => {
    const source = join(dir, 'x.c');
    await writeFile(source, 'int main(void) { return 0; }\n');
    let compiles = 0;
    const compile = async (output: string) => {
      compiles++;
      await new Promise((r) => setTimeout(r, 50));
      await writeFile(output, 'built');
    };
    const outputs = await Promise.all([1, 2, 3].map(() => cachedBuild(`${dir}/cache/`, 'x', source, '.o', compile)));
    expect(compiles).toBe(1);
    expect(new Set(outputs).size).toBe(1);
    expect(await readFile(outputs[0]!, 'utf8')).toBe('built');
  });
});

describe('cachedBuild versions', () => {
  it('a changed local header is a new version', async () => {
    const source = join(dir, 'y.c');
    await writeFile(join(dir, 'y.h'), 'struct a { int x; };\n');
    await writeFile(source, '#include "y.h"\nint main(void) { return 0; }\n');
    const compile = (output: string) => writeFile(output, 'built');
    const first = await cachedBuild(`${dir}/cache-a/`, 'y', source, '.o', compile);
    await writeFile(join(dir, 'y.h'), 'struct a { int x; int y; };\n');
    const second = await cachedBuild(`${dir}/cache-b/`, 'y', source, '.o', compile);
    expect(first.split('/').pop()).not.toBe(second.split('/').pop());
  });
});
