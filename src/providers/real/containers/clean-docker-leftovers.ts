// Containers we started directly (k3s nodes, tcpdump/conntrack helpers) carry the label
// netrepro.io/run=<run id>; a crashed run's are removed by that label, nothing else is touched.
import { runCommand } from '../../../contract/command.ts';

export async function cleanDockerLeftovers(removable: (runId: string) => Promise<boolean>): Promise<string[]> {
  const list = await runCommand(
    [
      'docker',
      'ps',
      '-a',
      '--filter',
      'label=netrepro.io/run',
      '--format',
      '{{.ID}}\t{{.Names}}\t{{.Label "netrepro.io/run"}}',
    ],
    { reject: false },
  );
  if (list.exitCode !== 0) return []; // no reachable engine: nothing of ours can be running there
  const removed: string[] = [];
  for (const line of list.stdout.split('\n').filter(Boolean)) {
    const [id = '', name = '', runId = ''] = line.split('\t');
    if (!/^[0-9a-f]{6}$/.test(runId) || !(await removable(runId))) continue;
    await runCommand(['docker', 'rm', '-f', id]);
    removed.push(`container ${name}`);
  }
  return removed;
}
