// The pod agent's command line for a program a pod or host serves (`serve: [{http: 8080}]`), the same on
// every provider: each server names itself with the pod's (or host's) name.
import type { TopologySpec } from '../model/scenario-schema.ts';
import { publishedReady } from './kube-objects.ts';

export type ProgramSpec = NonNullable<TopologySpec['pods'][number]['serve']>[number];

/** argv of `program` run by the agent `agent` as `name`; a DNS server is given `dnsArgs` (`--record=NAME=IP`, or `--records=FILE`). */
export function agentProgramArgv(
  agent: readonly string[],
  program: ProgramSpec,
  name: string,
  dnsArgs: readonly string[],
): string[] {
  if (program.http !== undefined) return [...agent, 'http', `--port=${program.http}`, `--name=${name}`];
  if (program.udp !== undefined) return [...agent, 'udp', `--port=${program.udp}`, `--name=${name}`];
  return [...agent, 'dns', `--port=${program.dns}`, `--name=${name}`, ...dnsArgs];
}

/**
 * The cluster DNS's A records as `NAME=IP` (a `--record` argument, or a line of a `--records` file): a Service's name answers its ClusterIP, a headless
 * one's the addresses of its ready endpoints (not-ready ones too where it publishes them), in endpoint order, as
 * the kube-dns and CoreDNS kubernetes plugins answer them. `podIP` gives a pod's address.
 */
export function dnsRecords(
  topology: TopologySpec,
  clusterIP: (svc: string) => string,
  podIP: (pod: string) => string,
): string[] {
  return topology.services.flatMap((s) => {
    const name = `${s.name}.${s.namespace}.svc.cluster.local`;
    if (s.clusterIP !== 'None') return [`${name}=${clusterIP(s.name)}`];
    return s.endpoints.filter((e) => publishedReady(s, e)).map((e) => `${name}=${podIP(e.pod)}`);
  });
}
