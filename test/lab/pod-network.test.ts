// A node as the lab builds it: its default route (via the fabric, which forwards nothing, or none), and
// its pods wired by the node's CNI chain, the real bridge and portmap plugins called as a runtime calls
// them: a hostPort is portmap's DNAT after boot and after a reboot, a chain without portmap writes none,
// and a DEL through the chain takes portmap's rules out again.
import { describe, expect, it } from 'vitest';
import { newRunId, runPrefix } from '../../src/contract/run-id.ts';
import { provisionNetnsLab } from '../../src/providers/netns/provision-netns-lab.ts';
import { labSkipReason, labTopology } from '../lab-support.ts';

const topology = labTopology(
  `
  cni: bridge
  hosts: [{ name: ext }]
  nodes:
    - { name: a, podCIDR: 10.244.1.0/24 }
    - { name: b, podCIDR: 10.244.2.0/24, defaultRoute: none }
  pods:
    - { name: client, node: a }
    - { name: web, node: a, serve: [{ http: 8080 }], hostPorts: [{ hostPort: 9000, containerPort: 8080 }] }`,
  '{ id: p, from: client, http: { to: pod/web, port: 8080 } }',
);

const context = (runId: string) => ({
  runId,
  prefix: runPrefix(runId),
  signal: new AbortController().signal,
  log: () => {},
});

describe.skipIf(labSkipReason)('a node as the lab builds it', () => {
  it('routes by default via the fabric, and forwards hostPorts through portmap in the CNI chain', async () => {
    await using lab = await provisionNetnsLab(topology, context(newRunId()));
    const route = async (node: string) => (await lab.node(node).exec(['ip', 'route', 'show', 'default'])).stdout;
    expect(await route('a')).toMatch(/^default via 172\.18\.0\.1 dev eth0/);
    expect(await route('b')).toBe('');
    expect((await lab.target('fabric').exec(['sysctl', '-n', 'net.ipv4.ip_forward'])).stdout.trim()).toBe('0');

    const dnat = async () =>
      (await lab.node('a').exec(['iptables-save', '-t', 'nat'])).stdout
        .split('\n')
        .filter((l) => l.startsWith('-A CNI-DN-') && l.includes('-j DNAT'));
    const viaHostPort = () =>
      lab.host('ext').exec(['curl', '-sS', '-m', '2', `http://${lab.address('node/a')}:9000/`], { reject: false });
    expect(await dnat()).toEqual([
      expect.stringMatching(
        new RegExp(`-p tcp -m tcp --dport 9000 -j DNAT --to-destination ${lab.address('pod/web')}:8080$`),
      ),
    ]);
    expect((await viaHostPort()).stdout).toContain('web');

    // a reboot empties the node's tables; the runtime sets the sandbox up again, portmap included
    await lab.perform({ kind: 'reboot', node: 'a' });
    expect(await dnat()).toHaveLength(1);
    expect((await viaHostPort()).stdout).toContain('web');

    // a chain without portmap: the recreated pod has a new address and no mapping
    const before = lab.address('pod/web');
    await lab.perform({ kind: 'cni-chain', node: 'a', plugins: ['bridge'], recreate: ['web'] });
    expect(lab.address('pod/web')).not.toBe(before);
    expect(await dnat()).toEqual([]);
    expect((await viaHostPort()).stderr).toMatch(/Connection refused|Couldn't connect/);

    await lab.perform({ kind: 'cni-chain', node: 'a', plugins: ['bridge', 'portmap'], recreate: ['web'] });
    expect((await viaHostPort()).stdout).toContain('web');

    // DEL through the chain, as at teardown: portmap's chain goes, and so does the pod's interface
    const web = lab.topology.pods.find((p) => p.name === 'web')!;
    await lab.sandboxes.delete(web);
    expect(await dnat()).toEqual([]);
    expect((await lab.pod('web').exec(['ip', '-o', 'link', 'show'])).stdout).not.toMatch(/ eth0@/);

    // made again; the teardown's DEL through the chain then has portmap's rules to take out, and succeeds
    await lab.sandboxes.recreate(web);
    expect(await dnat()).toHaveLength(1);
    await expect(lab.destroy()).resolves.toBeUndefined();
  });
});
