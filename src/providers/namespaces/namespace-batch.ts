// Namespaces made and removed in batches: one `ip -batch` each way, as every provider whose nodes are
// network namespaces does (the netns lab, the local cluster).
import { existsSync } from 'node:fs';
import { type CommandRunner, defaultRunner } from '../../contract/command.ts';
import { NETNS_DIR } from './lab-names.ts';
import { killAll, namespacePids } from './namespace-pids.ts';

/**
 * Kill whatever still runs inside the namespaces, then delete them all in one `ip -batch` (a
 * namespace with live processes would linger). Names that do not exist (any more) are skipped. `commands`:
 * the lab's runner, else node:child_process.
 */
export async function removeNamespaces(namespaces: readonly string[], commands = defaultRunner): Promise<void> {
  const paths = namespaces.map((ns) => `${NETNS_DIR}/${ns}`);
  for (const pids of (await namespacePids(paths)).values()) killAll(pids);
  const existing = namespaces.filter((ns) => existsSync(`${NETNS_DIR}/${ns}`));
  if (existing.length === 0) return;
  // -force: a name removed meanwhile (a concurrent clean) must not stop the others
  await commands.exec(['ip', '-force', '-batch', '-'], {
    input: existing.map((ns) => `netns del ${ns}\n`).join(''),
    reject: false,
  });
}

/** `lines` in one `ip -n NS -batch`, through `commands` (a lab's runner, else node:child_process). */
export async function ipBatch(ns: string, lines: string[], commands: CommandRunner = defaultRunner): Promise<void> {
  await commands.exec(['ip', '-n', ns, '-batch', '-'], { input: `${lines.join('\n')}\n` });
}
