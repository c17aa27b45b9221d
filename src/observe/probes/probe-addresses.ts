// A probe's two ends as addresses: the client's and where it sends to. `localhost` is the client's own
// loopback: its packets then leave from 127.0.0.1 (the kernel's source for a loopback destination), not from
// the client's address, until a NAT on the way rewrites them.
import type { StartedCluster } from '../../contract/provider.ts';
import { LOCALHOST, LOOPBACK_ADDRESS } from '../../model/localhost.ts';
import { probeClient, probeDestination } from '../../model/probes/registry.ts';
import type { ProbeSpec } from '../../model/scenario-schema.ts';
import type { Endpoint } from './classify.ts';

export function probeAddresses(
  spec: ProbeSpec,
  cluster: Pick<StartedCluster, 'address'>,
): { client: string; endpoint: Endpoint } {
  const to = probeDestination(spec);
  if (to.ref === LOCALHOST) return { client: LOOPBACK_ADDRESS, endpoint: { ip: LOOPBACK_ADDRESS, port: to.port } };
  return { client: cluster.address(probeClient(spec.from)), endpoint: { ip: cluster.address(to.ref), port: to.port } };
}

/** Whether the probe sends to its client's own loopback. */
export const toLocalhost = (spec: ProbeSpec) => probeDestination(spec).ref === LOCALHOST;
