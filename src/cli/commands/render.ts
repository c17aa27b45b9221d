// `netrepro render <id|file> [--profile NAME] [--node NAME] [--nfacct]`: what the netns lab would
// install on each node, computed without running anything (src/dataplane/render-node.ts).
import { renderNode } from '../../dataplane/render-node.ts';
import { HarnessError } from '../../model/errors.ts';
import { selectScenarios } from '../../model/find-scenarios.ts';
import { loadTopologyFile } from '../../model/load-scenario.ts';
import { loadProfile, profiledTopology } from '../../model/profile.ts';

interface RenderOptions {
  profile?: string;
  node?: string;
  nfacct?: boolean;
}

export default async function render(id: string, options: RenderOptions): Promise<void> {
  // a file needs only a valid topology (a scenario being written, fixes: [] included); an id is a shipped scenario
  const source = /\.ya?ml$/.test(id)
    ? await loadTopologyFile(id)
    : await selectScenarios([id]).then(([s]) => ({ id: s!.scenario.id, topology: s!.scenario.topology }));
  const topology = options.profile
    ? profiledTopology(source.topology, await loadProfile(options.profile))
    : source.topology;
  const nodes = topology.nodes.map((n) => n.name);
  if (options.node && !nodes.includes(options.node)) {
    throw new HarnessError('USAGE', `no node ${options.node} in ${source.id}`, `nodes: ${nodes.join(', ')}`);
  }
  for (const node of options.node ? [options.node] : nodes)
    process.stdout.write(renderNode(topology, node, { nfacct: options.nfacct }));
}
