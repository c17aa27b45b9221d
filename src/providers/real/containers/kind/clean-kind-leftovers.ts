// kind clusters named with a run prefix whose run is over (see reap-leftovers.ts), then the containers
// such runs started beside them (hosts outside the cluster, labelled with their run).
import { runCommand } from '../../../../contract/command.ts';
import { RUN_PREFIX } from '../../../../contract/run-id.ts';
import { onPath } from '../cli-tools.ts';
import { cleanDockerLeftovers } from '../clean-docker-leftovers.ts';

export async function cleanKindLeftovers(removable: (runId: string) => Promise<boolean>): Promise<string[]> {
  const list = await runCommand(['kind', 'get', 'clusters'], { reject: false });
  if (list.exitCode !== 0) return [];
  const removed: string[] = [];
  for (const name of list.stdout.split('\n').map((l) => l.trim())) {
    const runId = RUN_PREFIX.exec(name)?.[1];
    if (!runId || !(await removable(runId))) continue;
    await runCommand(['kind', 'delete', 'cluster', '--name', name]);
    removed.push(`kind cluster ${name}`);
  }
  if (await onPath('docker')) removed.push(...(await cleanDockerLeftovers(removable)));
  return removed;
}
