// The `delete` step in the netns lab, in the order a cluster deletes a pod: the EndpointSlice controller takes it
// out of its Services (kube-proxy syncs on every node, with its release's UDP conntrack clean-up), then the kubelet
// ends it: its processes killed, its sandbox torn down through the node's CNI chain (DEL), so its veth and its
// address are gone. Read back: no host-side interface left on its node and no process left in its namespace.
import { HarnessError } from '../../model/errors.ts';
import type { PodPlacement } from '../../contract/kube-objects.ts';
import type { NetnsLab } from './netns-lab.ts';
import { syncServices } from './service-change.ts';

export async function deletePod(
  lab: NetnsLab,
  name: string,
  placements: ReadonlyMap<string, PodPlacement>,
): Promise<void> {
  const pod = lab.topology.pods.find((p) => p.name === name);
  if (!pod)
    throw new HarnessError(
      'STEP_FAILED',
      `delete: no pod ${name} at this point of the scenario`,
      'an earlier step deleted it: delete a pod once',
    );
  const hostSide = lab.inventory.podInterface(name);
  const before = lab.topology.services;
  await lab.podDeleted(name);
  await lab.writeDnsRecords();
  await syncServices(lab, before, placements);
  await lab.sandboxes.delete(pod);
  const node = lab.node(pod.node);
  const left = hostSide ? await node.exec(['ip', 'link', 'show', 'dev', hostSide], { reject: false }) : undefined;
  if (left?.exitCode === 0)
    throw new HarnessError('STEP_FAILED', `delete: pod ${name}'s interface ${hostSide} is still on node ${pod.node}`);
  const pids = (await lab.commands.exec(['ip', 'netns', 'pids', lab.names.pod(name)])).stdout.trim();
  if (pids)
    throw new HarnessError(
      'STEP_FAILED',
      `delete: processes still run in pod ${name}'s namespace: ${pids.split('\n').join(', ')}`,
    );
}
