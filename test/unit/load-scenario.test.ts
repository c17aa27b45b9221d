import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ScenarioValidationError } from '../../src/model/errors.ts';
import { loadAllScenarios } from '../../src/model/find-scenarios.ts';
import { parseScenario } from '../../src/model/load-scenario.ts';
import { splitWords } from '../../src/model/placeholders.ts';

const seed = await readFile(new URL('../../scenarios/br-netfilter-clusterip-same-node.yaml', import.meta.url), 'utf8');

function issuesOf(source: string | Buffer): string[] {
  try {
    parseScenario(source, 'bad.yaml');
  } catch (e) {
    if (e instanceof ScenarioValidationError) return e.message.split('\n');
    throw e;
  }
  throw new Error('expected a validation error');
}

describe('scenario loading', () => {
  it('loads every seed scenario', async () => {
    const ids = (await loadAllScenarios()).map((s) => s.scenario.id);
    expect(ids).toEqual(
      expect.arrayContaining(['br-netfilter-clusterip-same-node', 'br-netfilter-dns-unexpected-source']),
    );
  });

  it('names file, line, column, field, what was received and what was expected', () => {
    const bad = seed.replace('podCIDR: 10.244.1.0/24', 'podCIDR: 10.244.1.0/99');
    const line = seed.split('\n').findIndex((l) => l.includes('podCIDR')) + 1;
    expect(issuesOf(bad)).toEqual([
      `bad.yaml:${line}:16: topology.nodes[0].podCIDR: an IPv4 CIDR such as 10.244.1.0/24 (received "10.244.1.0/99")`,
    ]);
  });

  it('reports unknown keys with the keys that are allowed', () => {
    const [issue] = issuesOf(
      seed.replace('    podCIDR: 10.244.1.0/24', '    podCIDR: 10.244.1.0/24\n      colour: red'),
    );
    expect(issue).toMatch(
      /bad\.yaml:\d+:\d+: topology\.nodes\[0\]\.colour: unknown key colour \(expected one of: name, podCIDR, sysctls, forwardPolicy, defaultRoute, cniChain, address, captured\)/,
    );
  });

  it('reports a wrong outcome inside an expectation object at its own line', () => {
    const [issue] = issuesOf(
      seed.replace('clusterip: { outcome: unexpected-source, source: pod/web }', 'clusterip: { outcome: hangs }'),
    );
    expect(issue).toMatch(
      /fault\.expect\.clusterip\.outcome: not an allowed value \(received "hangs", expected one of: ok, timeout/,
    );
  });

  it('checks references between sections', () => {
    const issues = issuesOf(
      seed.replace('from: client\n    http: { to: svc/web', 'from: clinet\n    http: { to: svc/wbe'),
    );
    expect(issues).toEqual([
      expect.stringMatching(/probes\[0\]\.from: unknown pod \(received clinet, expected one of: client, web\)/),
      expect.stringMatching(/probes\[0\]\.http\.to: unknown svc \(received wbe, expected one of: web\)/),
    ]);
  });

  it('a probe runs from a pod, node/NAME or host/NAME; each must exist', () => {
    expect(
      issuesOf(seed.replace('from: client\n    http: { to: svc/web', 'from: host/lb\n    http: { to: svc/web')),
    ).toEqual([expect.stringMatching(/probes\[0\]\.from: unknown host \(received lb, expected one of: none\)/)]);
    expect(() =>
      parseScenario(
        seed.replace('from: client\n    http: { to: svc/web', 'from: node/node-a\n    http: { to: svc/web'),
        'ok.yaml',
      ),
    ).not.toThrow();
    expect(
      issuesOf(seed.replace('from: client\n    http: { to: svc/web', 'from: svc/web\n    http: { to: svc/web'))[0],
    ).toMatch(/probes\[0\]\.from/);
  });

  it('rejects empty, non-mapping, binary and broken YAML with a line', () => {
    expect(issuesOf('')[0]).toContain('bad.yaml:1:1: the file is empty');
    expect(issuesOf('- a\n- b\n')[0]).toContain('the document must be a mapping (received a list');
    expect(issuesOf(Buffer.from([0x69, 0x64, 0x00, 0xff]))[0]).toContain('not a text file');
    expect(issuesOf('id: x\ntitle: [unclosed\n')[0]).toMatch(/^bad\.yaml:\d+:\d+: YAML:/);
  });

  it('refuses names that would reach a command line or interface name unsafely', () => {
    expect(
      issuesOf(seed.replace('- name: web\n      node: node-a', '- name: "web;rm -rf /"\n      node: node-a'))[0],
    ).toMatch(/topology\.pods\[1\]\.name: lower-case letters/);
  });
});

describe('run step words', () => {
  it('split on spaces, keep quoted words whole, expand nothing', () => {
    expect(splitWords(`iptables -A X -m comment --comment "a b" -j 'DROP'`)).toEqual([
      'iptables',
      '-A',
      'X',
      '-m',
      'comment',
      '--comment',
      'a b',
      '-j',
      'DROP',
    ]);
    expect(splitWords('echo $HOME `id`')).toEqual(['echo', '$HOME', '`id`']);
  });
});

describe('the minimal complete scenario in scenarios/README.md', () => {
  it('is valid as written', async () => {
    const readme = await readFile(new URL('../../scenarios/README.md', import.meta.url), 'utf8');
    const example = /```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    expect(parseScenario(example!, 'scenarios/README.md').id).toBe('closed-port-refused');
  });
});
