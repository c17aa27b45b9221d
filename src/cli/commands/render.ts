// `netrepro render <id|file> [--profile NAME] [--node NAME] [--nfacct]`: what the netns lab would
// install on each node, computed without running anything (src/dataplane/render-node.ts).
import { renderNode } from '../../dataplane/render-node.ts';
import { HarnessError } from '../../model/errors.ts';
import { selectScenarios } from '../../model/find-scenarios.ts';
import { applyProfile, loadProfile } from '../../model/profile.ts';

interface RenderOptions {
  profile?: string;
  node?: string;
  nfacct?: boolean;
}

export default async function render(id: string, options: RenderOptions): Promise<void> {
  const [loaded] = await selectScenarios([id]);
  let scenario = loaded!.scenario;
  if (options.profile) scenario = applyProfile(scenario, await loadProfile(options.profile));
  const nodes = scenario.topology.nodes.map((n) => n.name);
  if (options.node && !nodes.includes(options.node)) {
    throw new HarnessError('USAGE', `no node ${options.node} in ${scenario.id}`, `nodes: ${nodes.join(', ')}`);
  }
  for (const node of options.node ? [options.node] : nodes) process.stdout.write(renderNode(scenario.topology, node, { nfacct: options.nfacct }));
}
