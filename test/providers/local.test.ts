// local provider contract, without a cluster: what it declares, what it refuses up front, the pods and
// Services it asks for, and what detect() says without the one-time build. The cluster itself runs in
// test/real/ (npm run test:real).
import { describe, expect, it } from 'vitest';
import { localMisfit, localSupport, LOCAL_CAPABILITIES } from '../../src/providers/real/local/local-support.ts';
import { localBridgeConflist } from '../../src/providers/real/local/local-cluster-up.ts';
import { upstreamVersion } from '../../src/providers/real/local/local-build.ts';
import { providerSupport } from '../../src/providers/create-provider.ts';
import { NEVER_READY, podObject, serviceObjects } from '../../src/providers/real/common/workload-objects.ts';
import { realMisfit } from '../../src/providers/real/common/scenario-fit.ts';
import { resolveRealOptions } from '../../src/providers/real/common/real-options.ts';
import { topology } from './fake-env.ts';
import { bridgeConflist } from '../../src/dataplane/bridge-conflist.ts';
import { LocalCluster } from '../../src/providers/real/local/local-cluster.ts';

const IMAGES = { probeImage: 'p', agentImage: 'a' };
const proxy = (version: string, cni = 'bridge', nodes = 2) => ({ ...topology({ cni, nodes }), kubeProxy: version });

describe('local provider', () => {
  it('declares what a cluster of namespaces on this host can do, known without loading it', () => {
    expect(providerSupport('local').capabilities).toBe(LOCAL_CAPABILITIES);
    expect([...LOCAL_CAPABILITIES].sort()).toEqual([
      'action/delete',
      'action/endpoint',
      'action/service',
      'external-hosts',
      'fabric',
      'kube-proxy-restart',
      'node-agent',
      'node-exec',
      'path/bin',
      'path/port',
      'path/veth',
      'scenario-addresses',
    ]);
    expect(providerSupport('local').name).toBe('local');
  });

  it('names the helper programs of its pod image as {bin/NAME}, and refuses a name it has not', () => {
    const run = { runId: 'x', prefix: 'nr-x', signal: new AbortController().signal, log: () => {} };
    const cluster = new LocalCluster(['node-a'], run);
    expect(cluster.path('bin/inject-ahead')).toBe('/netrepro/inject-ahead');
    expect(() => cluster.path('bin/nope')).toThrow('{bin/nope}: no such helper program (there are: inject-ahead)');
  });

  it('fits bridge and flannel scenarios whose kube-proxy layout is 1.20s, and says why not otherwise', () => {
    expect(localMisfit(proxy('1.20'), { cni: undefined })).toBeUndefined();
    expect(localMisfit(proxy('1.15', 'flannel'), { cni: undefined })).toBeUndefined();
    expect(localMisfit(proxy('1.29'), { cni: undefined })?.hint).toMatch(/--profile kube-proxy-1\.20/);
    expect(localMisfit(proxy('1.14'), { cni: undefined })?.reason).toMatch(/INVALID DROP/);
    expect(localMisfit(proxy('1.20', 'cilium'), { cni: undefined })?.reason).toMatch(
      /Cilium is not packaged in Debian/,
    );
    expect(localMisfit(proxy('1.20'), { cni: 'flannel' })?.reason).toMatch(/NETREPRO_CNI/);
    expect(localSupport({ cni: undefined }).fit(proxy('1.20'))).toBeUndefined();
  });

  it("refuses a nodePort the API server's default range refuses, before making a cluster for it", () => {
    const withNodePort = (nodePort: number) => {
      const t = proxy('1.20');
      return { ...t, services: t.services.map((s) => ({ ...s, ports: s.ports.map((p) => ({ ...p, nodePort })) })) };
    };
    expect(localMisfit(withNodePort(30080), { cni: undefined })).toBeUndefined();
    expect(localMisfit(withNodePort(32767), { cni: undefined })).toBeUndefined();
    expect(localMisfit(withNodePort(53), { cni: undefined })?.reason).toMatch(/nodePort 53 is outside .* 30000-32767/);
    expect(localMisfit(withNodePort(32768), { cni: undefined })?.hint).toMatch(/--provider netns/);
  });

  it('starts a not-ready endpoint as a pod whose readiness probe never passes, and refuses what it cannot make', () => {
    const t = proxy('1.20');
    const web = t.pods[1]!.name;
    const withEndpoints = (...lists: { pod: string; ready: boolean; terminating: boolean }[][]) => ({
      ...t,
      services: lists.map((endpoints, i) => ({ ...t.services[0]!, name: `svc-${i}`, endpoints })),
    });
    const notReady = { pod: web, ready: false, terminating: false };
    const fits = withEndpoints([notReady], [notReady]);
    expect(localMisfit(fits, { cni: undefined })).toBeUndefined();
    expect(realMisfit('kind', fits, resolveRealOptions({ k8sVersion: 'v1.20.15' }, {}))).toBeUndefined();
    const pod = podObject({ pod: t.pods[1]!, namespace: 'default', nodeName: 'n', dnsRecords: [] }, fits, IMAGES, 'r');
    expect(pod.spec!.containers[0]!.readinessProbe).toEqual(NEVER_READY);
    const ready = podObject({ pod: t.pods[1]!, namespace: 'default', nodeName: 'n', dnsRecords: [] }, t, IMAGES, 'r');
    expect(ready.spec!.containers.some((c) => c.readinessProbe)).toBe(false);

    expect(localMisfit(withEndpoints([notReady], [{ ...notReady, ready: true }]), { cni: undefined })?.reason).toBe(
      `pod ${web} is a not-ready endpoint of service svc-0 and a ready one of svc-1; on a real cluster readiness is the pod's, the same in every Service`,
    );
    const terminating = withEndpoints([{ ...notReady, ready: true, terminating: true }]);
    expect(localMisfit(terminating, { cni: undefined })?.reason).toMatch(/svc-0 starts with a terminating endpoint/);
    expect(realMisfit('kind', terminating, resolveRealOptions({ k8sVersion: 'v1.20.15' }, {}))?.hint).toBe(
      'run it with --provider netns',
    );
  });

  it('keeps the default route a scenario leaves out, and refuses a CNI chain without portmap (its conflist chains it)', () => {
    const t = proxy('1.20');
    const node = (n: Partial<(typeof t.nodes)[number]>) => ({
      ...t,
      nodes: [{ ...t.nodes[0]!, ...n }, ...t.nodes.slice(1)],
    });
    expect(localMisfit(node({ defaultRoute: 'none' }), { cni: undefined })).toBeUndefined();
    expect(localMisfit(node({ cniChain: ['bridge', 'portmap'] }), { cni: undefined })).toBeUndefined();
    expect(localMisfit(node({ cniChain: ['bridge'] }), { cni: undefined })?.reason).toMatch(
      /node node-a's CNI chain \[bridge\] has no portmap/,
    );
  });

  it("asks for a pod's hostPorts on its sandbox, for the conflist's portmap", () => {
    const t = proxy('1.20');
    const pod = { ...t.pods[1]!, hostPorts: [{ hostPort: 9000, containerPort: 8080, protocol: 'TCP' as const }] };
    const web = podObject({ pod, namespace: 'default', nodeName: 'n', dnsRecords: [] }, t, IMAGES, 'abc123');
    expect(web.spec!.containers[0]!.ports).toEqual([{ containerPort: 8080, hostPort: 9000, protocol: 'TCP' }]);
    const plain = podObject({ pod: t.pods[1]!, namespace: 'default', nodeName: 'n', dnsRecords: [] }, t, IMAGES, 'x');
    expect(plain.spec!.containers[0]!.ports).toBeUndefined();
  });

  it("asks for pods that run the pod image's native agent, never pulled, and keeps the scenario's clusterIPs", () => {
    const t = proxy('1.20');
    const images = {
      probeImage: 'localhost/netrepro/pod:x',
      agentImage: 'localhost/netrepro/pod:x',
      agentCommand: ['/netrepro/pod-agent'],
      pullPolicy: 'Never' as const,
      ownCluster: true,
    };
    const web = podObject(
      { pod: t.pods[1]!, namespace: 'default', nodeName: 'nr-abc123-node-b', dnsRecords: [] },
      t,
      images,
      'abc123',
    );
    expect(web.spec!.volumes).toBeUndefined();
    expect(web.spec!.containers.map((c) => [c.name, c.imagePullPolicy, c.command?.[0], c.volumeMounts])).toEqual([
      ['probe', 'Never', 'sleep', undefined],
      ['agent', 'Never', 'sleep', undefined],
      ['serve-0', 'Never', '/netrepro/pod-agent', undefined],
    ]);
    const [svc] = serviceObjects(t, '', 'abc123', true);
    expect(svc!.metadata!.namespace).toBe(t.services[0]!.namespace);
    expect(svc!.spec!.clusterIP).toBe(t.services[0]!.clusterIP);
    expect(serviceObjects(t, 'nr-abc123-', 'abc123')[0]!.spec!.clusterIP).toBeUndefined();
  });

  it("writes the bridge shape's conflist with host-local's state in the node's directory", () => {
    const conf = JSON.parse(localBridgeConflist('10.244.1.0/24', '/var/tmp/x/ipam', 1450)) as {
      plugins: Record<string, unknown>[];
    };
    expect(conf.plugins[0]).toMatchObject({
      type: 'bridge',
      bridge: 'cni0',
      ipMasq: false,
      hairpinMode: true,
      mtu: 1450,
      ipam: { type: 'host-local', dataDir: '/var/tmp/x/ipam', ranges: [[{ subnet: '10.244.1.0/24' }]] },
    });
    // the conflist the netns lab calls plugin by plugin, chained with portmap as real clusters ship it
    expect(conf).toEqual(
      bridgeConflist('10.244.1.0/24', { cniVersion: '0.4.0', ipamDir: '/var/tmp/x/ipam', mtu: 1450 }),
    );
    expect(conf.plugins[1]).toEqual({ type: 'portmap', capabilities: { portMappings: true } });
  });

  it("reads the upstream release out of Debian's version", () => {
    expect(upstreamVersion('1.20.5+really1.20.2-1.1+deb12u1')).toBe('v1.20.2');
  });

  it('says how to build when there is no build', async () => {
    const { LocalProvider } = await import('../../src/providers/real/local/local-provider.ts');
    const before = process.env.NETREPRO_CACHE;
    process.env.NETREPRO_CACHE = '/nonexistent-netrepro-cache';
    try {
      const a = await new LocalProvider().detect();
      expect(a.ok).toBe(false);
      if (!a.ok)
        expect(`${a.reason} ${a.hint}`).toMatch(process.getuid?.() === 0 ? /npm run build:kubernetes/ : /root/);
    } finally {
      if (before === undefined) delete process.env.NETREPRO_CACHE;
      else process.env.NETREPRO_CACHE = before;
    }
  });
});
