// Rebooting a kind node: `docker restart` of its container; kind's node image boots it back by itself.
import { runCommand } from '../../../../contract/command.ts';
import type { RunContext } from '../../../../contract/provider.ts';
import { assertOwnedName } from '../../common/context-guard.ts';

export function restartKindNode(run: RunContext, docker: readonly string[]) {
  return async (container: string): Promise<void> => {
    assertOwnedName(container, run.prefix, 'node container');
    await runCommand([...docker, 'restart', container], { timeoutMs: 180_000, signal: run.signal });
  };
}
