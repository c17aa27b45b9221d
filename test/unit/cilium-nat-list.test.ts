// The SNAT table's print format, `cilium-dbg bpf nat list` at v1.20.0-pre.0: pkg/tuple/ipv4.go
// (TupleKey4Global.Dump: "%s IN %s:%d -> %s:%d " / "%s OUT ...", then "related " / "service " by flag) and
// pkg/maps/nat/ipv4.go (NatEntry4.Dump: "XLATE_%s %s:%d Created=%s NeedsCT=%d\n", DST for TUPLE_F_IN), and
// the lab's pinned map (bpftool -j, recorded from a lab run) printed the same way.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { natEntryLine, parseNatEntry } from '../../src/dataplane/cilium-nat-list.ts';
import { packagePath } from '../../src/model/package-root.ts';
import { labNatEntries } from '../../src/providers/netns/lab-nat-entries.ts';

describe("cilium-dbg bpf nat list's lines", () => {
  it('parses a reply and an original tuple as upstream prints them, with and without the clock source', () => {
    expect(
      parseNatEntry('TCP IN 172.18.0.9:80 -> 172.18.0.2:40180 XLATE_DST 10.244.0.5:40180 Created=12sec ago NeedsCT=1'),
    ).toEqual({
      protocol: 'TCP',
      direction: 'IN',
      source: '172.18.0.9',
      sourcePort: 80,
      destination: '172.18.0.2',
      destinationPort: 40180,
      xlate: '10.244.0.5',
      xlatePort: 40180,
      created: '12sec ago',
      needsCt: 1,
    });
    expect(
      parseNatEntry(
        'UDP OUT 10.244.0.3:51012 -> 172.18.0.1:53 XLATE_SRC 172.18.0.2:51012 Created=? (raw 123) NeedsCT=0',
      ),
    ).toMatchObject({ protocol: 'UDP', direction: 'OUT', xlate: '172.18.0.2', created: '? (raw 123)', needsCt: 0 });
    expect(
      parseNatEntry('ICMP IN 8.8.8.8:0 -> 172.18.0.2:65000 related XLATE_DST 10.244.0.5:7 Created=1sec ago NeedsCT=1'),
    ).toMatchObject({ protocol: 'ICMP', direction: 'IN', xlatePort: 7 });
  });

  it('leaves IPv6 entries and messages about maps it could not open alone', () => {
    expect(
      parseNatEntry('TCP IN fd00::1:80 -> fd00::2:40000 XLATE_DST fd00:10::5:40000 Created=1sec ago NeedsCT=1'),
    ).toBeUndefined();
    expect(
      parseNatEntry('Unable to open /sys/fs/bpf/tc/globals/cilium_snat_v6_external: no such file. Skipping.'),
    ).toBeUndefined();
    expect(parseNatEntry('')).toBeUndefined();
  });

  it('prints an entry as it parses it', () => {
    const line = 'TCP IN 172.18.0.9:80 -> 172.18.0.2:40180 XLATE_DST 10.244.0.5:40180 Created=12sec ago NeedsCT=1';
    expect(natEntryLine(parseNatEntry(line)!)).toBe(line);
  });
});

describe("the lab's SNAT map", () => {
  it('prints a recorded bpftool -j dump (one flow, reply and original tuple) as cilium-dbg does', () => {
    const dump = readFileSync(packagePath('test/unit/fixtures/lab-snat-map.bpftool.json'), 'utf8');
    expect(labNatEntries(dump)).toEqual([
      'TCP IN 172.18.0.100:80 -> 172.18.0.2:56084 XLATE_DST 10.244.1.2:56084 Created=? (raw 23455372101462) NeedsCT=0',
      'TCP OUT 10.244.1.2:56084 -> 172.18.0.100:80 XLATE_SRC 172.18.0.2:56084 Created=? (raw 23455372101462) NeedsCT=0',
    ]);
    expect(labNatEntries('[]')).toEqual([]);
  });
});
