// minikube profiles named with a run prefix whose run is over (see reap-leftovers.ts), then the containers
// such runs started beside them (hosts outside the cluster, labelled with their run).
import { runCommand } from '../../../../contract/command.ts';
import { RUN_PREFIX } from '../../../../contract/run-id.ts';
import { onPath } from '../cli-tools.ts';
import { cleanDockerLeftovers } from '../clean-docker-leftovers.ts';

interface ProfileList {
  valid?: { Name: string }[];
  invalid?: { Name: string }[];
}

export async function cleanMinikubeLeftovers(removable: (runId: string) => Promise<boolean>): Promise<string[]> {
  const list = await runCommand(['minikube', 'profile', 'list', '-o', 'json'], { reject: false });
  let profiles: ProfileList = {};
  try {
    profiles = JSON.parse(list.stdout) as ProfileList;
  } catch {} // "no profiles" is printed as an error object on some versions
  const removed: string[] = [];
  for (const { Name: name } of [...(profiles.valid ?? []), ...(profiles.invalid ?? [])]) {
    const runId = RUN_PREFIX.exec(name)?.[1];
    if (!runId || !(await removable(runId))) continue;
    await runCommand(['minikube', 'delete', '-p', name]);
    removed.push(`minikube profile ${name}`);
  }
  if (await onPath('docker')) removed.push(...(await cleanDockerLeftovers(removable)));
  return removed;
}
