// `netrepro render <id|file> [--profile NAME] [--node NAME] [--nfacct]`: what the netns lab would
// install on each node, computed without running anything (clusters/netns/render-node.ts).
import type { Command } from 'commander';
import { HarnessError } from '../model/errors.ts';

interface RenderOptions {
  profile?: string;
  node?: string;
  nfacct?: boolean;
}

export function registerRender(program: Command): void {
  program
    .command('render')
    .description('print what the netns lab installs on each node (iptables-save text, routes, neighbour/FDB entries) without running anything')
    .argument('<id>', 'scenario id or YAML file')
    .option('--profile <name>', 'apply this profile first (profiles/NAME.yaml or a YAML file)')
    .option('--node <name>', 'only this node')
    .option('--nfacct', 'as on a node where kube-proxy could create its nfacct counters (the lab cannot: no nfacct tool)')
    .action(async (id: string, options: RenderOptions) => {
      const [{ selectScenarios }, { applyProfile, loadProfile }, { renderNode }] = await Promise.all([
        import('../model/find-scenarios.ts'),
        import('../model/profile.ts'),
        import('../../clusters/netns/render-node.ts'),
      ]);
      const [loaded] = await selectScenarios([id]);
      let scenario = loaded!.scenario;
      if (options.profile) scenario = applyProfile(scenario, await loadProfile(options.profile));
      const nodes = scenario.topology.nodes.map((n) => n.name);
      if (options.node && !nodes.includes(options.node)) {
        throw new HarnessError('USAGE', `no node ${options.node} in ${scenario.id}`, `nodes: ${nodes.join(', ')}`);
      }
      for (const node of options.node ? [options.node] : nodes) process.stdout.write(renderNode(scenario.topology, node, { nfacct: options.nfacct }));
    });
}
