// Capabilities checked before provisioning: what each step kind needs, what a scenario needs, what
// each provider declares, and that the engine skips at once without provisioning anything.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { cliInProcess } from '../cli-in-process.ts';
import { describe, expect, it } from 'vitest';
import { providerSupport } from '../../src/providers/create-provider.ts';
import type { ClusterProvider } from '../../src/contract/provider.ts';
import { unrunnableFixes, unsupported } from '../../src/contract/provider-support.ts';
import { applyProfile, loadProfile } from '../../src/model/profile.ts';
import { resolveRunConfig } from '../../src/providers/run-config.ts';
import { TeardownStack } from '../../src/contract/teardown-stack.ts';
import { runScenario } from '../../src/engine/run/run-scenario.ts';
import type { RunEvent } from '../../src/engine/run/results.ts';
import { ALL_CAPABILITIES } from '../../src/model/capabilities.ts';
import { loadScenarioFile } from '../../src/model/load-scenario.ts';
import { literalAddress, scenarioRequirements } from '../../src/model/scenario-requirements.ts';
import type { Scenario, StepSpec } from '../../src/model/scenario-schema.ts';
import { STEP_KINDS, stepRequires } from '../../src/model/steps/registry.ts';

const ROOT = join(import.meta.dirname, '../..');
const SCENARIOS = readdirSync(join(ROOT, 'scenarios'), { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => join(ROOT, 'scenarios', f));
const run = (on: string, cmd: string) =>
  ({ run: { on, cmd, background: false, lead: 50, timeout: '30s', expect: { exit: 0 } } }) as StepSpec;

describe('step kinds declare what they need', () => {
  it('lab actions, node namespaces, hosts, the fabric and lab-name placeholders', () => {
    expect(stepRequires({ reboot: { node: 'node-a' } } as StepSpec)).toEqual(['action/reboot']);
    // kube-proxy restarted as it is (another configuration at most) needs less than another release or component
    expect(stepRequires({ start: { node: 'node-a', component: 'kube-proxy' } } as StepSpec)).toEqual([
      'kube-proxy-restart',
    ]);
    expect(stepRequires({ start: { node: 'node-a', component: 'kube-proxy', version: '1.29' } } as StepSpec)).toEqual([
      'action/start',
    ]);
    expect(stepRequires({ start: { node: 'node-a', component: 'flannel' } } as StepSpec)).toEqual(['action/start']);
    expect(stepRequires({ 'sock-lb-detach-stale': { node: 'node-a' } } as StepSpec)).toEqual([
      'action/sock-lb-detach-stale',
    ]);
    expect(stepRequires({ 'br-netfilter': { node: 'node-a', enabled: false } } as StepSpec)).toEqual(['node-exec']);
    expect(stepRequires({ sysctl: { on: 'pod/web', name: 'net.ipv4.ip_forward', value: 0 } } as StepSpec)).toEqual([]);
    expect(stepRequires({ sysctl: { on: 'host/docs', name: 'net.ipv4.ip_forward', value: 0 } } as StepSpec)).toEqual([
      'external-hosts',
    ]);
    expect(stepRequires(run('node/node-a', 'tc qdisc add dev {veth/web} root netem loss 100%'))).toEqual([
      'node-exec',
      'path/veth',
    ]);
    expect(stepRequires(run('fabric', 'tcpdump -i {port/node-a}'))).toEqual(['fabric', 'path/port']);
    expect(stepRequires(run('pod/client', 'curl {svc/web}'))).toEqual([]);
    expect(stepRequires({ 'link-mtu': { on: 'node/node-a', dev: '{veth/web}', mtu: 1400 } } as StepSpec)).toEqual([
      'node-exec',
      'path/veth',
    ]);
  });

  it('a kind that declares nothing still needs what its expansion shows', () => {
    const kind = STEP_KINDS.run as { requires?: unknown };
    const declared = kind.requires;
    try {
      delete kind.requires;
      expect(stepRequires(run('node/node-a', 'ip link set {veth/web} down'))).toEqual(['node-exec', 'path/veth']);
    } finally {
      kind.requires = declared;
    }
  });
});

describe('providers declare what they can do', () => {
  it('netns can run every shipped scenario; kind, minikube and k3s say why not, before anything exists', async () => {
    const loaded = await Promise.all(SCENARIOS.map((file) => loadScenarioFile(file)));
    for (const { scenario } of loaded) expect(unsupported(providerSupport('netns'), scenario)).toBeUndefined();
    const kind = providerSupport(resolveRunConfig({ provider: 'kind' }, {}));
    const reasons = Object.fromEntries(
      loaded.map(({ scenario }) => [scenario.id, unsupported(kind, scenario)?.reason]),
    );
    expect(reasons['br-netfilter-clusterip-same-node']).toBeUndefined();
    expect(reasons['stale-sock-lb-program']).toMatch(
      /^kind cannot attach a BPF socket-LB program .*needed by fault, step 1 \(sock-lb-stale-program\)\): Cilium attaches its socket-LB programs through bpf_links .*not grounded at the pinned chart's 1\.20\.0.*; nor detach a socket-LB program it attached .*: no real provider attaches a stale socket-LB program to detach/,
    );
    expect(reasons['hostport-without-portmap']).toMatch(
      /^kind cannot change a node's CNI chain and recreate pods' sandboxes through it \(needed by fault, step 1 \(cni-chain\)\)/,
    );
    // kind and minikube reboot a node, start its components by hand and have hosts outside the cluster
    expect(reasons['cilium-kube-proxy-forward-race']).toBeUndefined();
    // a step it cannot perform as written is seen from the file too: v1.35.1's kube-proxy cannot start as 1.14
    expect(reasons['cilium-kube-proxy-restart-no-race']).toMatch(
      /^kind cannot run this scenario: fix kube-proxy-1-14-ipvs-cleanup, step 1 \(start\): the cluster's kube-proxy cannot start as 1\.14/,
    );
    const minikube = providerSupport(resolveRunConfig({ provider: 'minikube' }, {}));
    const race = loaded.find(({ scenario }) => scenario.id === 'cilium-kube-proxy-forward-race')!.scenario;
    expect(unsupported(minikube, race)).toBeUndefined();
    // k3s's cilium shape runs upstream kube-proxy as a DaemonSet: the race runs there
    const k3s = providerSupport(resolveRunConfig({ provider: 'k3s' }, {}));
    // the socket-LB reason is every real provider's, beside k3s's own
    const staleSockLb = loaded.find(({ scenario }) => scenario.id === 'stale-sock-lb-udp-dns')!.scenario;
    for (const support of [minikube, k3s])
      expect(unsupported(support, staleSockLb)?.reason).toMatch(
        /cannot attach a BPF socket-LB program .*\(needed by fault, step 1 \(sock-lb-stale-program\)\): Cilium attaches .*bpf_sock\.o its agent compiles at start/,
      );
    expect(unsupported(k3s, race)).toBeUndefined();
    expect(
      unsupported(providerSupport(resolveRunConfig({ provider: 'k3s' }, { NETREPRO_CNI: 'cilium' })), race),
    ).toBeUndefined();
    // with flannel, k3s says why it cannot: kube-proxy and flannel are part of its own process
    const k3sFlannel = providerSupport(resolveRunConfig({ provider: 'k3s' }, { NETREPRO_CNI: 'flannel' }));
    expect(unsupported(k3sFlannel, race)?.reason).toMatch(
      /^k3s cannot reboot a node .*needed by fault, step 1 \(reboot\)\): k3s runs kube-proxy and flannel inside its own process, .*no DaemonSet to hold off the node/,
    );
    expect(unsupported(k3sFlannel, staleSockLb)?.reason).toMatch(
      /Cilium attaches .*bpf_sock\.o its agent compiles at start/,
    );
    // a run that selects no CNI runs a flannel scenario with k3s's own kube-proxy: its start step is refused
    const flannelStart = {
      ...race,
      topology: { ...race.topology, cni: 'flannel' as const, startOrder: ['kube-proxy' as const, 'flannel' as const] },
      fault: { ...race.fault, steps: [{ start: { node: 'node-a', component: 'kube-proxy' as const } }] },
      fixes: race.fixes.filter((f) => f.name === 'be-liberal-alone-is-not-enough'),
    } as Scenario;
    expect(unsupported(k3s, flannelStart)?.reason).toMatch(
      /^k3s cannot run this scenario: fault, step 1 \(start\): k3s runs kube-proxy and flannel inside its own process/,
    );
  });

  it("netns declares every capability; the real providers commands in a node namespace and Service changes, kind, minikube and k3s also hosts, starts, reboots and a node's SNAT table (k3s with its own kube-proxy and flannel: hosts only)", () => {
    expect([...providerSupport('netns').capabilities].sort()).toEqual([...ALL_CAPABILITIES].sort());
    for (const name of ['kind', 'minikube'])
      expect([...providerSupport(resolveRunConfig({ provider: name }, {})).capabilities]).toEqual([
        'node-exec',
        'action/endpoint',
        'action/delete',
        'action/service',
        'external-hosts',
        'kube-proxy-restart',
        'action/start',
        'action/reboot',
        'snat-table',
      ]);
    expect([
      ...providerSupport(resolveRunConfig({ provider: 'k3s' }, { NETREPRO_CNI: 'cilium' })).capabilities,
    ]).toEqual([
      'node-exec',
      'action/endpoint',
      'action/delete',
      'action/service',
      'external-hosts',
      'kube-proxy-restart',
      'action/start',
      'action/reboot',
      'snat-table',
    ]);
    expect([
      ...providerSupport(resolveRunConfig({ provider: 'k3s' }, { NETREPRO_CNI: 'flannel' })).capabilities,
    ]).toEqual(['node-exec', 'action/endpoint', 'action/delete', 'action/service', 'external-hosts']);
  });

  it("a node without a default route fits the lab, not kind's nodes (they keep their network's)", async () => {
    const { scenario: fits } = await loadScenarioFile(join(ROOT, 'scenarios/br-netfilter-clusterip-same-node.yaml'));
    const nodes = fits.topology.nodes.map((n) => ({ ...n, defaultRoute: 'none' }));
    const scenario = { ...fits, topology: { ...fits.topology, nodes } };
    expect(unsupported(providerSupport('netns'), scenario)).toBeUndefined();
    const kind = providerSupport(resolveRunConfig({ provider: 'kind' }, {}));
    expect(unsupported(kind, fits)).toBeUndefined();
    expect(unsupported(kind, scenario)?.reason).toMatch(/node node-a has defaultRoute: none/);
  });

  it("a node that boots with FORWARD DROP fits the lab and local, not kind's nodes (they boot as their image does)", async () => {
    const { scenario: fits } = await loadScenarioFile(join(ROOT, 'scenarios/br-netfilter-clusterip-same-node.yaml'));
    const nodes = fits.topology.nodes.map((n) => ({ ...n, forwardPolicy: 'DROP' as const }));
    // under kube-proxy 1.20, which the local cluster runs
    const scenario = { ...fits, topology: { ...fits.topology, kubeProxy: '1.20' as const, nodes } };
    expect(unsupported(providerSupport('netns'), scenario)).toBeUndefined();
    expect(unsupported(providerSupport(resolveRunConfig({ provider: 'local' }, {})), scenario)).toBeUndefined();
    const kind = providerSupport(resolveRunConfig({ provider: 'kind' }, {}));
    const onKind = { ...fits, topology: { ...fits.topology, nodes } };
    expect(unsupported(kind, onKind)?.reason).toMatch(/node node-a boots with forwardPolicy: DROP/);
  });

  it('a udp probe, or a dns probe by the agent, from a node needs the agent there: the lab and local, not kind', () => {
    const base = { from: 'node/node-a', timeout: '800ms', parallel: 1 };
    const needs = (probe: object) =>
      scenarioRequirements({
        ...({} as Scenario),
        topology: { nodes: [], pods: [], services: [], hosts: [] } as unknown as Scenario['topology'],
        probes: [{ id: 'p', ...base, ...probe }] as Scenario['probes'],
        baseline: { expect: {} } as Scenario['baseline'],
        fault: { steps: [], expect: {} } as unknown as Scenario['fault'],
        fixes: [],
      }).map((n) => n.capability);
    expect(needs({ udp: { to: 'svc/web', port: 53 } })).toContain('node-agent');
    expect(needs({ dns: { server: 'svc/dns', name: 'a.b', tool: 'agent' } })).toContain('node-agent');
    expect(needs({ dns: { server: 'svc/dns', name: 'a.b', tool: 'nslookup' } })).not.toContain('node-agent');
    expect(needs({ http: { to: 'svc/web', port: 80, path: '/' } })).not.toContain('node-agent');
    expect(providerSupport(resolveRunConfig({ provider: 'local' }, {})).capabilities.has('node-agent')).toBe(true);
    expect(providerSupport(resolveRunConfig({ provider: 'kind' }, {})).capabilities.has('node-agent')).toBe(false);
  });

  it('a scenario names where each need comes from', async () => {
    const { scenario } = await loadScenarioFile(join(ROOT, 'scenarios/stale-sock-lb-program.yaml'));
    const needs = scenarioRequirements(scenario);
    expect(needs).toContainEqual({
      capability: 'action/sock-lb-stale-program',
      by: 'fault, step 1 (sock-lb-stale-program)',
    });
    expect(needs.find((n) => n.capability === 'path/cgroup')?.by).toMatch(/^baseline, check /);
  });

  it("a literal address in a check, step or expectation needs the scenario's addresses; a placeholder does not", async () => {
    expect(literalAddress({ cmd: 'conntrack -L --orig-dst 10.96.0.10' })).toBe('10.96.0.10');
    expect(literalAddress({ matches: 'src=10\\.244\\.1\\.3 ' })).toBe('10.244.1.3');
    expect(literalAddress({ cmd: 'grep src={pod/client} /proc/net/xt_recent' })).toBeUndefined();
    expect(literalAddress({ cmd: 'curl 127.0.0.1:8080', also: '0.0.0.0', version: '1.20.2' })).toBeUndefined();
    expect(literalAddress({ sentTo: '10.244.1.99:8080' })).toBe('10.244.1.99');
    const { scenario } = await loadScenarioFile(join(ROOT, 'scenarios/stale-sock-lb-program.yaml'));
    const needs = scenarioRequirements(scenario).filter((n) => n.capability === 'scenario-addresses');
    expect(needs.map((n) => n.by)).toEqual([
      'fault, step 1 (sock-lb-stale-program: 10.244.1.99)',
      'fault, expect.clusterip (10.244.1.99)',
    ]);
    const kind = providerSupport(resolveRunConfig({ provider: 'kind' }, {}));
    expect(kind.capabilities.has('scenario-addresses')).toBe(false);
    expect(providerSupport('local').capabilities.has('scenario-addresses')).toBe(true);
  });
});

describe('{ns/NAME}: every provider names its namespaces', () => {
  it('a namespace placeholder in a check command or pattern needs nothing; a lab name in a pattern does', async () => {
    const { scenario } = await loadScenarioFile(join(ROOT, 'scenarios/nodeport-local-policy-no-local-endpoint.yaml'));
    const counter = JSON.stringify(scenario.fault.checks.map((c) => c.counter));
    expect(counter).toContain('{ns/default}/web:http has no local endpoints');
    const check = { ...scenario.fault.checks[0]!, cmd: 'iptables-save -t nat -c {ns/default}' };
    const copy = { ...scenario, fault: { ...scenario.fault, checks: [check] } };
    expect(
      scenarioRequirements(copy)
        .filter((n) => n.by.includes(check.id))
        .map((n) => n.capability),
    ).toEqual(['node-exec']);
    const veth = { ...check, counter: '^\\[(\\d+):\\d+\\] .* -i {veth/web} ' };
    expect(
      scenarioRequirements({ ...scenario, fault: { ...scenario.fault, checks: [veth] } }).map((n) => n.capability),
    ).toContain('path/veth');
    for (const name of ['kind', 'minikube', 'k3s']) {
      const support = providerSupport(resolveRunConfig({ provider: name }, {}));
      expect(unsupported(support, copy)).toEqual(unsupported(support, scenario));
    }
    expect(unsupported(providerSupport(resolveRunConfig({ provider: 'kind' }, {})), copy)).toBeUndefined();
  });
});

describe('kernel settings a node cannot have of its own', () => {
  it('a host-global sysctl (step or node setting) is refused by every provider, naming the knob, why, and what could run it', async () => {
    const { scenario } = await loadScenarioFile(join(ROOT, 'scenarios/conntrack-invalid-reset.yaml'));
    const step = { sysctl: { on: 'node/node-a', name: 'net.netfilter.nf_conntrack_max', value: 64 } } as StepSpec;
    const node = { ...scenario.topology.nodes[0]!, sysctls: { 'net.ipv4.neigh.default.gc_thresh3': 64 } };
    const copy = {
      ...scenario,
      topology: { ...scenario.topology, nodes: [node] },
      fault: { ...scenario.fault, steps: [step, ...scenario.fault.steps] },
    };
    for (const name of ['netns', 'kind', 'minikube', 'k3s']) {
      const misfit = unsupported(
        providerSupport(name === 'netns' ? 'netns' : resolveRunConfig({ provider: name }, {})),
        copy,
      )!;
      expect(misfit.reason).toContain(`${name} cannot set a kernel setting the whole host shares on one node`);
      expect(misfit.hint).toMatch(/a kernel of their own/);
    }
    const needs = scenarioRequirements(copy)
      .filter((n) => n.capability === 'host-kernel')
      .map((n) => n.by);
    expect(needs).toEqual([
      "topology.nodes node-a.sysctls: net.ipv4.neigh.default.gc_thresh3 exists only in the host's initial network namespace: the neighbour table's garbage collection is per host",
      "fault, step 1 (sysctl): net.netfilter.nf_conntrack_max is read-only outside the host's initial network namespace: one conntrack table size for the whole host",
    ]);
    // a per-namespace knob needs nothing more than the node's namespace
    expect(scenarioRequirements(scenario).some((n) => n.capability === 'host-kernel')).toBe(false);
  });
});

describe('the engine skips before provisioning', () => {
  it('an unsupported scenario is skipped with the reason, and provision is never called', async () => {
    const { file, scenario } = await loadScenarioFile(join(ROOT, 'scenarios/stale-sock-lb-program.yaml'));
    let provisioned = 0;
    const provider: ClusterProvider = {
      ...providerSupport(resolveRunConfig({ provider: 'kind' }, {})),
      detect: async () => ({ ok: true }),
      provision: async () => {
        provisioned++;
        throw new Error('must not provision');
      },
      reap: async () => [],
    };
    const events: RunEvent[] = [];
    const t0 = performance.now();
    const result = await runScenario(
      { file, scenario },
      { provider, signal: new AbortController().signal, emit: (e) => events.push(e) },
    );
    expect(performance.now() - t0).toBeLessThan(500);
    expect(provisioned).toBe(0);
    expect(result.verdict).toBe('skipped');
    expect(result.skipReason).toMatch(/^kind cannot attach a BPF socket-LB program/);
    expect(result.labs).toEqual([]);
    expect(events.map((e) => e.kind)).toEqual(['scenario-start', 'scenario-end']);
  });
});

describe('a fix variant the provider cannot run', () => {
  const local = () => providerSupport(resolveRunConfig({ provider: 'local' }, {}));
  const underLocal = async (name: string) => {
    const { file, scenario } = await loadScenarioFile(join(ROOT, `scenarios/${name}`));
    return { file, scenario: applyProfile(scenario, await loadProfile('kube-proxy-1.20')) };
  };

  it('is left out with the reason while another variant remains; the others run', async () => {
    const { file, scenario } = await underLocal('conntrack-invalid-reset.yaml');
    expect(unsupported(local(), scenario)).toBeUndefined();
    expect(unrunnableFixes(local(), scenario)).toEqual([
      {
        fix: 'kube-proxy-1-15-invalid-drop',
        reason:
          'local cannot start a node component (kube-proxy of a given release, Cilium, flannel) by hand (needed by fix kube-proxy-1-15-invalid-drop, step 1 (start))',
      },
    ]);
    let provisioned = 0;
    const provider: ClusterProvider = {
      ...local(),
      detect: async () => ({ ok: true }),
      provision: async () => {
        provisioned++;
        throw new Error('stop here');
      },
      reap: async () => [],
    };
    const result = await runScenario(
      { file, scenario },
      { provider, signal: new AbortController().signal, emit: () => {} },
    );
    expect(provisioned).toBe(1);
    expect(result.phases.map((p) => p.variant)).not.toContain('kube-proxy-1-15-invalid-drop');
    expect(result.skippedFixes?.map((f) => f.fix)).toEqual(['kube-proxy-1-15-invalid-drop']);
  });

  it('when it is the only one, the whole scenario is skipped', async () => {
    const { scenario } = await underLocal('local-policy-terminating-endpoint-dropped.yaml');
    expect(unrunnableFixes(local(), scenario)).toEqual([]);
    expect(unsupported(local(), scenario)?.reason).toMatch(
      /^local cannot start a node component .* fix kube-proxy-1-26/,
    );
  });

  it('validate --provider names it beside ok', async () => {
    const r = await cliInProcess([
      'validate',
      '--provider',
      'local',
      '--profile',
      'kube-proxy-1.20',
      'scenarios/conntrack-invalid-reset.yaml',
    ]);
    expect([r.exitCode, r.stdout]).toEqual([
      0,
      'scenarios/conntrack-invalid-reset.yaml: ok; fix kube-proxy-1-15-invalid-drop skipped: local cannot start a node component (kube-proxy of a given release, Cilium, flannel) by hand (needed by fix kube-proxy-1-15-invalid-drop, step 1 (start))',
    ]);
  });
});

describe('validate --provider', () => {
  it('reports the skip and exits 0; a supported file is ok', async () => {
    const r = await cliInProcess([
      'validate',
      '--provider',
      'kind',
      'scenarios/stale-sock-lb-program.yaml',
      'scenarios/br-netfilter-clusterip-same-node.yaml',
    ]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      expect.stringMatching(
        /^scenarios\/stale-sock-lb-program.yaml: skipped on kind: kind cannot attach a BPF socket-LB program .* \(hint: run it with --provider netns\)$/,
      ),
      'scenarios/br-netfilter-clusterip-same-node.yaml: ok',
    ]);
  });

  it('with a profile, its versions decide the fit', async () => {
    const r = await cliInProcess([
      'validate',
      '--provider',
      'kind',
      '--profile',
      'kube-proxy-1.14',
      'scenarios/br-netfilter-clusterip-same-node.yaml',
    ]);
    expect([r.exitCode, r.stdout]).toEqual([0, 'scenarios/br-netfilter-clusterip-same-node.yaml: ok']);
  });
});

describe('TeardownStack', () => {
  it('undoes newest first, every action even after a failure, once, and reports the failures together', async () => {
    const done: string[] = [];
    const logged: string[] = [];
    const stack = new TeardownStack((l) => logged.push(l));
    stack.push('first', async () => done.push('first'));
    stack.push('broken', async () => {
      throw new Error('busy');
    });
    stack.push('last', async () => done.push('last'));
    const first = stack.run();
    await expect(first).rejects.toThrow('teardown incomplete: broken: busy');
    await expect(stack.run()).rejects.toThrow('teardown incomplete');
    expect(done).toEqual(['last', 'first']);
    expect(logged).toEqual(['teardown: last', 'teardown: first']);
    let late = false;
    expect(() => stack.push('late', async () => void (late = true))).toThrow(
      /late: registered after teardown began; undone at once/,
    );
    await Promise.resolve();
    expect(late).toBe(true);
  });
});
