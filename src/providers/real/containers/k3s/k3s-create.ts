// Starting the k3s server container, behind a function so tests replace testcontainers (which
// needs a container engine) with a recorder. testcontainers is loaded only when k3s really runs.
import { importOptional } from '../../common/optional-module.ts';

export interface K3sStartInput {
  image: string;
  /** Container name: the run prefix first, so `clean` finds it. */
  name: string;
  labels: Record<string, string>;
  /** k3s server arguments. */
  command: string[];
  /** The docker network it joins (hosts outside the cluster join it too). */
  network: string;
}

export interface StartedK3s {
  /** Name `docker exec` reaches the node by. */
  name: string;
  /** kubeconfig with the host-mapped API server address. */
  kubeconfig: string;
  stop(): Promise<void>;
}

export type StartK3s = (input: K3sStartInput) => Promise<StartedK3s>;

export const startK3sWithTestcontainers: StartK3s = async (input) => {
  const { K3sContainer } = await importOptional('the k3s provider', () => import('@testcontainers/k3s'));
  const started = await new K3sContainer(input.image)
    .withName(input.name)
    .withLabels(input.labels)
    .withCommand(input.command)
    .withNetworkMode(input.network)
    .start();
  return { name: input.name, kubeconfig: started.getKubeConfig(), stop: async () => void (await started.stop()) };
};
