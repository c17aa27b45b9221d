// A replay's probes, ready to edit: every pod to every port of every Service with endpoints (http on TCP, dns on
// UDP 53, udp elsewhere), each pod to a serving pod on every other node, and each captured UDP flow from a pod to
// a Service again from its own source port (a stale conntrack entry shows only to the socket that made it).
// Each is expected `ok`: the captured state is the baseline, so the broken ones fail with their mismatch.
import type { ScenarioInput } from '../../model/scenario-schema.ts';

type TopologyInput = ScenarioInput['topology'];
type ProbeInput = ScenarioInput['probes'][number];
type ExpectInput = ScenarioInput['baseline']['expect'];

export function deriveProbes(t: TopologyInput): { probes: ProbeInput[]; expect: ExpectInput } {
  const probes: ProbeInput[] = [];
  const expect: ExpectInput = {};
  const ids = new Set<string>();
  const add = (id: string, probe: Omit<ProbeInput, 'id'>, expected: ExpectInput[string]) => {
    const unique = uniqueId(id, ids);
    probes.push({ id: unique, ...probe } as ProbeInput);
    expect[unique] = expected;
  };
  const services = (t.services ?? []).filter((s) => s.clusterIP !== 'None' && s.endpoints.length > 0);
  for (const client of t.pods) {
    for (const s of services)
      for (const port of s.ports) {
        const protocol = port.protocol ?? 'TCP';
        const id = `${client.name}-${s.name}-${port.port}`;
        if (protocol === 'TCP') add(id, { from: client.name, http: { to: `svc/${s.name}`, port: port.port } }, 'ok');
        else if (port.port === 53)
          add(id, { from: client.name, dns: { server: `svc/${s.name}`, name: dnsName(s) } }, 'ok');
        else add(id, { from: client.name, udp: { to: `svc/${s.name}`, port: port.port } }, 'ok');
      }
    for (const node of t.nodes) {
      if (node.name === client.node) continue;
      const server = t.pods.find((p) => p.node === node.name && p.serve?.some((x) => 'http' in x));
      const port = server?.serve?.find((x): x is { http: number } => 'http' in x)?.http;
      if (server && port !== undefined)
        add(
          `${client.name}-${server.name}`,
          { from: client.name, http: { to: `pod/${server.name}`, port } },
          { outcome: 'ok', servedBy: server.name },
        );
    }
  }
  for (const flow of capturedUdpFlows(t)) {
    const id = `${flow.client}-${flow.service.name}-from-${flow.sourcePort}`;
    const probe =
      flow.port === 53
        ? { dns: { server: `svc/${flow.service.name}`, name: dnsName(flow.service), sourcePort: flow.sourcePort } }
        : { udp: { to: `svc/${flow.service.name}`, port: flow.port, sourcePort: flow.sourcePort } };
    add(id, { from: flow.client, ...probe }, 'ok');
  }
  return { probes, expect };
}

const dnsName = (s: { name: string; namespace?: string }) => `${s.name}.${s.namespace ?? 'default'}.svc.cluster.local`;

/** The captured UDP conntrack entries from a pod to a Service's ClusterIP and port: the flows a client kept its socket for. */
function capturedUdpFlows(t: TopologyInput) {
  const podByIp = new Map(t.pods.filter((p) => p.ip).map((p) => [p.ip!, p.name]));
  const seen = new Set<string>();
  const flows: {
    client: string;
    service: NonNullable<TopologyInput['services']>[number];
    port: number;
    sourcePort: number;
  }[] = [];
  for (const node of t.nodes)
    for (const line of node.captured?.conntrack ?? []) {
      const m = /\budp\s+17\s+\d+\s+src=(\S+) dst=(\S+) sport=(\d+) dport=(\d+)/.exec(line);
      if (!m) continue;
      const [, src, dst, sport, dport] = m;
      const client = podByIp.get(src!);
      const service = (t.services ?? []).find(
        (s) => s.clusterIP === dst && s.ports.some((p) => p.port === Number(dport) && p.protocol === 'UDP'),
      );
      const key = `${client}/${service?.name}/${sport}/${dport}`;
      if (!client || !service || seen.has(key)) continue;
      seen.add(key);
      flows.push({ client, service, port: Number(dport), sourcePort: Number(sport) });
    }
  return flows;
}

/** A probe id (a Name: at most 32 characters) of its own. */
function uniqueId(id: string, ids: Set<string>): string {
  const trimmed = (s: string) => s.slice(0, 32).replace(/-+$/, '');
  let candidate = trimmed(id);
  for (let i = 2; ids.has(candidate); i++) candidate = `${trimmed(id).slice(0, 28).replace(/-+$/, '')}-${i}`;
  ids.add(candidate);
  return candidate;
}
