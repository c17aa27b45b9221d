// The pod agent's command line for a program a pod or host serves (`serve: [{http: 8080}]`), the same on
// every provider: each server names itself with the pod's (or host's) name.
import type { TopologySpec } from '../model/scenario-schema.ts';

export type ProgramSpec = NonNullable<TopologySpec['pods'][number]['serve']>[number];

/** argv of `program` run by the agent `agent` as `name`; a DNS server answers `dnsRecords` (`--record=NAME=IP`). */
export function agentProgramArgv(
  agent: readonly string[],
  program: ProgramSpec,
  name: string,
  dnsRecords: readonly string[],
): string[] {
  if (program.http !== undefined) return [...agent, 'http', `--port=${program.http}`, `--name=${name}`];
  if (program.udp !== undefined) return [...agent, 'udp', `--port=${program.udp}`, `--name=${name}`];
  return [...agent, 'dns', `--port=${program.dns}`, `--name=${name}`, ...dnsRecords];
}
