// Rebooting a kind node: `docker restart` of its container; kind's node image boots it back by itself. The
// restarted container has a new network namespace, so what the bridge shape put there (routes to the other
// nodes' podCIDRs) is put back, as a node's CNI would at boot.
import { runCommand } from '../../../../contract/command.ts';
import type { RunContext } from '../../../../contract/provider.ts';
import { assertOwnedName } from '../../common/context-guard.ts';

export function restartKindNode(
  run: RunContext,
  docker: readonly string[],
  afterRestart: (container: string) => Promise<void> = async () => {},
) {
  return async (container: string): Promise<void> => {
    assertOwnedName(container, run.prefix, 'node container');
    await runCommand([...docker, 'restart', container], { timeoutMs: 180_000, signal: run.signal });
    await afterRestart(container);
  };
}
