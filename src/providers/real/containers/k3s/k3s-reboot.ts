// Rebooting the k3s node: `docker restart` of the container testcontainers started (k3s is its first process, so
// the server, the kubelet and containerd come back with it; its network namespace is made anew, empty of rules
// and conntrack entries). testcontainers publishes the API server's port on a host port docker picks at each
// start, so the run's kubeconfig is pointed at the port docker gave it this time; the API client loads the file
// anew when it changes (kubeconfig-following-api.ts), kubectl reads it at every call.
import { readFile, writeFile } from 'node:fs/promises';
import { parse, stringify } from 'yaml';
import { HarnessError } from '../../../../model/errors.ts';
import { runCommand } from '../../../../contract/command.ts';
import type { RunContext } from '../../../../contract/provider.ts';
import { assertOwnedName } from '../../common/context-guard.ts';

/** The port k3s's API server listens on in its container (`--https-listen-port`'s default). */
export const K3S_API_PORT = 6443;
const PORT_TIMEOUT_MS = 30_000;

export interface K3sRebootInput {
  /** The k3s container (named with the run prefix). */
  container: string;
  /** The run's kubeconfig, whose server is the API server's published port. */
  kubeconfig: string;
  run: RunContext;
  /** How long docker may take to publish the port (default 30 s; tests make it short). */
  portTimeoutMs?: number;
}

/** The kubeconfig with every cluster's server on host port `port` (same scheme and host). */
export function withServerPort(kubeconfig: string, port: number): string {
  const doc = parse(kubeconfig) as { clusters: { cluster: { server: string } }[] };
  for (const { cluster } of doc.clusters) {
    const url = new URL(cluster.server);
    url.port = String(port);
    cluster.server = url.origin;
  }
  return stringify(doc);
}

export function restartK3sNode({ container, kubeconfig, run, portTimeoutMs = PORT_TIMEOUT_MS }: K3sRebootInput) {
  return async (): Promise<void> => {
    assertOwnedName(container, run.prefix, 'k3s container');
    await runCommand(['docker', 'restart', container], { timeoutMs: 180_000, signal: run.signal });
    const port = await publishedPort(container, portTimeoutMs, run.signal);
    await writeFile(kubeconfig, withServerPort(await readFile(kubeconfig, 'utf8'), port));
  };
}

/** `docker port C 6443/tcp` prints `0.0.0.0:32771` (and `[::]:32771`) once the container runs. */
async function publishedPort(container: string, timeoutMs: number, signal: AbortSignal): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await runCommand(['docker', 'port', container, `${K3S_API_PORT}/tcp`], {
      timeoutMs: 30_000,
      reject: false,
      signal,
    });
    const port = Number(/:(\d+)$/m.exec(got.stdout)?.[1]);
    if (got.exitCode === 0 && port > 0) return port;
    if (Date.now() > deadline)
      throw new HarnessError(
        'LAB_FAILED',
        `k3s container ${container}: no host port for its API server after the restart (${(got.stdout + got.stderr).trim() || 'nothing printed'})`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
}
