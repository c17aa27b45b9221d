// A Service or EndpointSlice change in the netns lab: the lab's copy of the services changes, then
// kube-proxy syncs on every node (kube-proxy-sync.ts) with the release it runs there. The sync is read back:
// every rule it wrote must be in `iptables-save` and no stale service chain left, or the step fails.
import { HarnessError } from '../../model/errors.ts';
import type { LabAction } from '../../model/lab-action.ts';
import { changedEndpoints } from '../../model/steps/endpoint.ts';
import { changedService } from '../../model/steps/service.ts';
import type { PodPlacement } from '../../contract/kube-objects.ts';
import { applyOps, IptablesModel } from '../../dataplane/iptables-ops.ts';
import { kubeProxyLayout, proxies } from '../../dataplane/kube-proxy-layout.ts';
import { kubeProxySyncOps, parseUdpFlows, readBeLiberal, rulesFor, udpConntrackDeletes } from './kube-proxy-sync.ts';
import type { NetnsLab } from './netns-lab.ts';

type ServiceChange = Extract<LabAction, { kind: 'endpoint' | 'service' }>;

export async function changeServices(
  lab: NetnsLab,
  action: ServiceChange,
  placements: ReadonlyMap<string, PodPlacement>,
): Promise<void> {
  const name = action.kind === 'endpoint' ? action.service : action.name;
  const before = lab.topology.services;
  if (!before.some((s) => s.name === name)) throw new HarnessError('LAB_FAILED', `no service ${name} in this lab`);
  let after;
  try {
    after = before.map((s) =>
      s.name !== name
        ? s
        : action.kind === 'endpoint'
          ? { ...s, endpoints: changedEndpoints(s.endpoints, action) }
          : changedService(s, action),
    );
  } catch (e) {
    throw new HarnessError(
      'STEP_FAILED',
      (e as Error).message,
      'the change must fit the service as it is at that point of the scenario',
    );
  }
  lab.replaceServices(after);
  await lab.writeDnsRecords();
  await syncServices(lab, before, placements);
}

/**
 * kube-proxy's sync on every node after the lab's Services changed from `before` to what they are now: its rules
 * rewritten and read back, then the UDP conntrack clean-up of its release; `placements` still hold any pod that
 * just left (the clean-up deletes entries to its address).
 */
export async function syncServices(
  lab: NetnsLab,
  before: NetnsLab['topology']['services'],
  placements: ReadonlyMap<string, PodPlacement>,
): Promise<void> {
  const after = lab.topology.services;
  await Promise.all(
    lab.nodeNames.map(async (nodeName) => {
      const node = lab.node(nodeName);
      const proxy = lab.kubeProxy(nodeName);
      const layout = kubeProxyLayout(proxy.release);
      const liberal = await readBeLiberal(node);
      const rules = rulesFor(lab.topology, proxy, nodeName, placements, liberal);
      const save = (await node.exec(['iptables-save'])).stdout;
      await applyOps(node, kubeProxySyncOps(rules, save), save);
      const missing = missingRules(rules.tables, (await node.exec(['iptables-save'])).stdout);
      if (missing.length > 0)
        throw new HarnessError(
          'STEP_FAILED',
          `kube-proxy's sync on ${nodeName} did not take: not in iptables-save: ${missing.slice(0, 3).join(' | ')}`,
        );
      const flows =
        layout.udpConntrack === 'event'
          ? []
          : parseUdpFlows((await node.exec(['conntrack', '-L', '-p', 'udp'], { reject: false })).stdout);
      // `conntrack -D` exits 1 when nothing matched: kube-proxy ignores that too
      // a Service kube-proxy ignores (its labels) is one it deleted, as far as the clean-up goes
      const proxied = (list: typeof before) => list.filter((s) => s.clusterIP !== 'None' && proxies(layout, s.labels));
      for (const argv of udpConntrackDeletes(layout, proxied(before), proxied(after), placements, flows))
        await node.exec(argv, { reject: false });
      if (lab.serviceHealth.wanted) await lab.serviceHealth.sync(nodeName, placements);
    }),
  );
}

/** Rules of the sync that `iptables-save` does not show, by table. */
function missingRules(tables: Record<'filter' | 'nat', { rules: string[] }>, save: string): string[] {
  const node = IptablesModel.fromSave(save);
  return (['filter', 'nat'] as const).flatMap((t) =>
    tables[t].rules.filter((r) => {
      const [, chain = '', spec = ''] = /^-A (\S+) (.*)$/.exec(r) ?? [];
      return chain !== '' && !node.has(t, chain, spec);
    }),
  );
}
