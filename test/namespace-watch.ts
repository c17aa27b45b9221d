// Watching which lab namespaces appear while something runs, and which process owns them: the
// bad-input tests use it to show that refusing a file creates nothing, test/lab/namespace-watch
// that it does see a lab when one is built.
import { existsSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { labNamespaces } from './host-snapshot.ts';

/**
 * Lab namespaces created while `during` runs, with the pid that owns their run (from
 * /run/netrepro/<id>/owner.json, written before a run's first namespace and removed after its last).
 * Other test files' labs appear here too; callers compare the owner with the process under test.
 */
export async function namespacesCreatedDuring<T>(
  during: () => Promise<T>,
): Promise<{ value: T; created: { ns: string; ownerPid?: number }[] }> {
  const created: { ns: string; ownerPid?: number }[] = [];
  const note = (ns: string) => {
    const m = /^nr-([0-9a-f]{6})-/.exec(ns);
    // the watch also reports deletions: only namespaces that exist are creations
    if (!m || created.some((c) => c.ns === ns) || !existsSync(`/run/netns/${ns}`)) return;
    let ownerPid: number | undefined;
    try {
      // the state dir exists before the first namespace of a run and outlives its last one
      ownerPid = (JSON.parse(readFileSync(`/run/netrepro/${m[1]}/owner.json`, 'utf8')) as { pid: number }).pid;
    } catch {}
    created.push({ ns, ownerPid });
  };
  const before = new Set(await labNamespaces());
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch('/run/netns', (_event, name) => name && note(String(name)));
  } catch {} // no /run/netns yet: the before/after comparison below still applies
  try {
    const value = await during();
    for (const ns of await labNamespaces()) if (!before.has(ns)) note(ns);
    return { value, created };
  } finally {
    watcher?.close();
  }
}
