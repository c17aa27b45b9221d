// What kind runs left whose run is over (see reap-leftovers.ts): private Docker engines (their nodes go with
// them), kind clusters on the host's Docker named with a run prefix, then the containers such runs started
// beside them (hosts outside the cluster, labelled with their run).
import { join } from 'node:path';
import { runCommand } from '../../../../contract/command.ts';
import { RUN_PREFIX } from '../../../../contract/run-id.ts';
import { onPath } from '../cli-tools.ts';
import { cleanDockerLeftovers } from '../clean-docker-leftovers.ts';
import { reapPrivateDockers } from '../private-docker.ts';
import { findKindBuild } from './kind-build.ts';

export async function cleanKindLeftovers(
  removable: (runId: string) => Promise<boolean>,
  workDir: string,
): Promise<string[]> {
  const build = findKindBuild();
  const docker = build ? join(build.dockerRoot, 'usr/bin/docker') : 'docker';
  const removed = await reapPrivateDockers(docker, workDir, removable);
  if (!(await onPath('kind'))) return removed;
  const list = await runCommand(['kind', 'get', 'clusters'], { reject: false });
  if (list.exitCode !== 0) return removed;
  for (const name of list.stdout.split('\n').map((l) => l.trim())) {
    const runId = RUN_PREFIX.exec(name)?.[1];
    if (!runId || !(await removable(runId))) continue;
    await runCommand(['kind', 'delete', 'cluster', '--name', name]);
    removed.push(`kind cluster ${name}`);
  }
  if (await onPath('docker')) removed.push(...(await cleanDockerLeftovers(removable)));
  return removed;
}
