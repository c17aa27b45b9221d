// `netrepro clean`: every provider reaps what its earlier runs left behind, by the run prefix (labs of
// dead owners only, unless --force; the live ones it leaves are named). A provider whose libraries are
// not installed has nothing to reap that this machine could reach through it; that is said on stderr,
// not an error.
import { createProvider, PROVIDER_NAMES } from '../../providers/create-provider.ts';
import { removeKeptRun } from '../../providers/kept-run.ts';
import { resolveRunConfig } from '../../providers/run-config.ts';
import { HarnessError } from '../../model/errors.ts';

export default async function clean(options: { force?: boolean; run?: string }): Promise<void> {
  if (options.run !== undefined) {
    const removed = await removeKeptRun(options.run);
    process.stdout.write(
      removed.length ? removed.map((r) => `removed ${r}\n`).join('') : `nothing of run ${options.run} on this host\n`,
    );
    return;
  }
  const force = options.force ?? false;
  const removed: string[] = [];
  const alive: string[] = [];
  // local first: its pods' processes are found by their cgroups, before the netns lab removes the namespaces by name
  for (const name of ['local', ...PROVIDER_NAMES.filter((n) => n !== 'local')] as const) {
    let provider;
    try {
      provider = await createProvider(resolveRunConfig({ provider: name }));
    } catch (e) {
      if (!(e instanceof HarnessError && e.code === 'ENVIRONMENT')) throw e;
      process.stderr.write(`${name}: not reaped (${e.message})\n`);
      continue;
    }
    removed.push(...(await provider.reap({ force })));
    if (!force) alive.push(...((await provider.liveRuns?.()) ?? []));
  }
  process.stdout.write(
    removed.length
      ? removed.map((r) => `removed ${r}\n`).join('')
      : `nothing to clean${alive.length ? ' of dead runs' : ''}\n`,
  );
  // a run still going (or kept with --keep) is not a leftover: said, so a lab still up is no mystery
  if (alive.length)
    process.stdout.write(
      `${alive.map((r) => `left alone: ${r}\n`).join('')}(netrepro clean --force removes those too)\n`,
    );
}
