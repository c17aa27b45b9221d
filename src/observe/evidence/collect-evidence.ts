// Evidence per phase and node: a packet capture spanning the phase, then snapshots of the rules,
// conntrack and routing state, collected concurrently and written under the report directory.
import { CAPTURE_READY_MS } from '../capture-ready.ts';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Spawned } from '../../contract/command.ts';
import type { StartedCluster } from '../../contract/provider.ts';
import type { Scenario } from '../../model/scenario-schema.ts';
import { makeDirectories } from '../../model/make-directories.ts';

type Kind = Scenario['evidence'][number];

const SNAPSHOTS: Record<Exclude<Kind, 'capture' | 'bpf'>, { file: string; argv: string[] }[]> = {
  iptables: [{ file: 'iptables-save.txt', argv: ['iptables-save', '-c'] }],
  conntrack: [
    { file: 'conntrack-L.txt', argv: ['conntrack', '-L'] },
    { file: 'conntrack-S.txt', argv: ['conntrack', '-S'] },
  ],
  ip: [
    { file: 'ip-addr.txt', argv: ['ip', '-d', 'addr'] },
    { file: 'ip-route.txt', argv: ['ip', 'route'] },
    {
      file: 'sysctl-net.txt',
      argv: [
        'sysctl',
        'net.bridge.bridge-nf-call-iptables',
        'net.ipv4.ip_forward',
        'net.netfilter.nf_conntrack_tcp_be_liberal',
      ],
    },
  ],
};

/** Map dumps where a node has a bpffs (cilium shape): SNAT state by full tuple and socket-LB reverse entries. */
function bpfSnapshots(cluster: StartedCluster, node: string): { file: string; argv: string[] }[] {
  let dir: string;
  try {
    dir = cluster.path(`bpffs/${node}`);
  } catch {
    return [];
  }
  const dump = (file: string, pin: string) => ({
    file,
    argv: ['bpftool', '--nomount', 'map', 'dump', 'pinned', `${dir}/${pin}`],
  });
  return [
    dump('bpf-snat.txt', 'masq-maps/cilium_snat_v4_external'),
    dump('bpf-lb4-reverse-sk.txt', 'sock-current-maps/cilium_lb4_reverse_sk'),
  ];
}

export interface PhaseCapture {
  /** Stops every capture and writes capture.txt next to capture.pcap. */
  stop(): Promise<void>;
}

export async function startPhaseCapture(
  cluster: StartedCluster,
  dir: string,
  kinds: readonly Kind[],
): Promise<PhaseCapture> {
  if (!kinds.includes('capture')) return { stop: async () => {} };
  const captures: { node: string; process: Spawned }[] = [];
  try {
    for (const node of cluster.nodeNames) {
      const nodeDir = join(dir, node);
      await makeDirectories(nodeDir);
      // -w keeps a pcap for Wireshark, --print the text a person reads; -U flushes per packet;
      // 256 bytes per packet keep every header and a DNS or HTTP head, not the body of a 20 MB download
      const process = cluster
        .node(node)
        .spawn([
          'tcpdump',
          '-i',
          'any',
          '-nn',
          '-s',
          '256',
          '-U',
          '-l',
          '--immediate-mode',
          '-w',
          join(nodeDir, 'capture.pcap'),
          '--print',
        ]);
      captures.push({ node, process });
    }
    await Promise.all(captures.map((c) => c.process.waitFor(/listening on/, CAPTURE_READY_MS)));
  } catch (e) {
    await Promise.allSettled(captures.map((c) => c.process.stop('SIGKILL')));
    throw e;
  }
  return {
    async stop() {
      await Promise.all(
        captures.map(async ({ node, process }) => {
          await process.stop('SIGINT');
          const text = process.lines().filter((l) => !/^(listening on|tcpdump:|\d+ packets)/.test(l));
          await writeFile(join(dir, node, 'capture.txt'), `${text.join('\n')}\n`);
        }),
      );
    },
  };
}

export async function snapshotEvidence(cluster: StartedCluster, dir: string, kinds: readonly Kind[]): Promise<void> {
  const jobs = cluster.nodeNames.flatMap((node) =>
    kinds
      .flatMap((kind) => (kind === 'capture' ? [] : kind === 'bpf' ? bpfSnapshots(cluster, node) : SNAPSHOTS[kind]))
      .map(async ({ file, argv }) => {
        const r = await cluster.node(node).exec(argv, { reject: false, timeoutMs: 10_000 });
        await makeDirectories(join(dir, node));
        await writeFile(join(dir, node, file), r.stdout + (r.stderr.trim() ? `\n# stderr:\n${r.stderr}` : ''));
      }),
  );
  await Promise.all(jobs);
}

/** Runs `body` (the phase's steps and probes) inside a capture, then snapshots the state it left. */
export async function collectPhaseEvidence(
  cluster: StartedCluster,
  dir: string | undefined,
  kinds: readonly Kind[],
  body: () => Promise<void>,
): Promise<void> {
  if (!dir) return body();
  const capture = await startPhaseCapture(cluster, dir, kinds);
  try {
    await body();
  } finally {
    await capture.stop();
  }
  await snapshotEvidence(cluster, dir, kinds);
}
