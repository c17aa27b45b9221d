// A replay's state directories (`nodes[].captured.state`, relative to the scenario file) read into the scenario
// when it loads, so the lab and `render` see the captured rules as if they were inline; each problem names
// the file, the line of the field and the path it could not read.
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ScenarioValidationError } from './errors.ts';
import type { TopologySpec } from './scenario-schema.ts';

/** The files of a state directory, as a capture bundle names them. */
export const STATE_FILES = { iptables: 'iptables-save.txt', conntrack: 'conntrack.txt' } as const;

/** `topology` with each node's state directory read in; `line` finds a field's line in the scenario file. */
export async function withCapturedFiles<T extends { topology: TopologySpec }>(
  scenario: T,
  file: string,
  line: () => (path: (string | number)[]) => number,
): Promise<T> {
  if (!scenario.topology.nodes.some((n) => n.captured?.state)) return scenario;
  const nodes = await Promise.all(
    scenario.topology.nodes.map(async (node, i) => {
      const state = node.captured?.state;
      if (!node.captured || state === undefined) return node;
      const dir = resolve(dirname(file), state);
      const read = async (name: string, optional: boolean) => {
        try {
          return await readFile(join(dir, name), 'utf8');
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (optional && code === 'ENOENT') return '';
          const path = ['topology', 'nodes', i, 'captured', 'state'];
          throw new ScenarioValidationError(
            [
              {
                file,
                line: line()(path),
                column: 1,
                field: `topology.nodes[${i}].captured.state`,
                message: `cannot read ${join(dir, name)} (${code ?? (e as Error).message})`,
                received: state,
                expected: `a directory beside the scenario holding ${name}`,
              },
            ],
            'a replay and its state directories move together: copy the directory with the file',
          );
        }
      };
      const [iptables, conntrack] = await Promise.all([
        read(STATE_FILES.iptables, false),
        read(STATE_FILES.conntrack, true),
      ]);
      const entries = conntrack
        .split('\n')
        .map((l) => l.trim().replace(/\s+/g, ' '))
        .filter((l) => /^(ipv4 \d+ )?(tcp|udp) /.test(l));
      return { ...node, captured: { ...node.captured, iptables, conntrack: [...node.captured.conntrack, ...entries] } };
    }),
  );
  return { ...scenario, topology: { ...scenario.topology, nodes } };
}
