// The drop tracer's filter entries as bpftool batch lines: the namespace inode as the loader's u32 key,
// in the host's (little-endian) byte order, the value 1; a delete carries no value.
import { describe, expect, it } from 'vitest';
import { dropFilterLine } from '../../src/providers/netns/bpf-maps.ts';

describe('drop filter lines', () => {
  it('key the map by the namespace inode, little-endian', () => {
    // 4026532301 = 0xf00001cd
    expect(dropFilterLine('update', 42, 4026532301)).toBe(
      'map update id 42 key hex cd 01 00 f0 value hex 01 00 00 00\n',
    );
    expect(dropFilterLine('delete', 42, 4026532301)).toBe('map delete id 42 key hex cd 01 00 f0\n');
  });
});
