// Waiting for kube-proxy: a change through the API is done when every node's own rules show it, read with
// `iptables-save` through the provider's node exec (a namespace of this host, `docker exec`, `minikube ssh`).
import { HarnessError } from '../../../model/errors.ts';
import type { Target } from '../../../contract/provider.ts';
import { parseIptablesSave, type NodeRules } from './service-rules.ts';

const SYNC_TIMEOUT_MS = 30_000;
const POLL_MS = 100;

/**
 * Polls each node's rules until `done(rules, node)` holds on every one of `nodes` (scenario node name to
 * target), or throws LAB_FAILED naming the nodes still behind; ABORTED when the run is.
 */
export async function waitRules(
  nodes: ReadonlyMap<string, Target>,
  what: string,
  done: (rules: NodeRules, node: string) => boolean,
  signal: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + SYNC_TIMEOUT_MS;
  const pending = new Set(nodes.keys());
  for (;;) {
    for (const name of [...pending]) {
      const saved = await nodes.get(name)!.exec(['iptables-save'], { signal });
      if (done(parseIptablesSave(saved.stdout), name)) pending.delete(name);
    }
    if (pending.size === 0) return;
    if (signal.aborted) throw new HarnessError('ABORTED', `aborted while waiting for ${what}`);
    if (Date.now() > deadline)
      throw new HarnessError(
        'LAB_FAILED',
        `${what}: not on node ${[...pending].join(', ')} within ${SYNC_TIMEOUT_MS} ms`,
      );
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
