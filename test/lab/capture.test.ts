// `netrepro capture --run` on a lab left faulted by `run --keep --stop-after faulted`: the bundle shows the faults
// (br_netfilter "not loaded" on node-a as the lab emulates it; FORWARD DROP on both nodes), capturing changes
// nothing in the node (rules with their counters, conntrack), the one-script form (kubectl debug's) reads what the
// command-by-command form reads, and `clean --run` leaves nothing of the run. Times and sizes are printed.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/contract/command.ts';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';
import { NO_OWN_CGROUP, nodeCommands } from '../../src/observe/capture/capture-commands.ts';
import { TargetReader } from '../../src/observe/capture/node-reader.ts';
import { ScriptReader } from '../../src/observe/capture/script-reader.ts';
import { NetnsTarget } from '../../src/providers/namespaces/netns-target.ts';
import { liveRuns } from '../../src/providers/netns/clean-leftovers.ts';
import { runProcess } from '../child-process.ts';
import { cliInProcess } from '../cli-in-process.ts';
import { labSkipReason, tempDir } from '../lab-support.ts';

const cli = (args: string[]) =>
  runProcess('node', [join(PACKAGE_ROOT, 'bin/netrepro.js'), ...args], { cwd: PACKAGE_ROOT });

/** Runs the scenario file up to its faulted phase and keeps the lab: its run id. */
async function keptFaulted(file: string): Promise<string> {
  const r = await cli(['run', file, '--keep', '--stop-after', 'faulted', '--quiet']);
  expect(r.exitCode, r.stderr).toBe(0);
  const runId = /kept: \S+ \[[^\]]+\] run ([0-9a-f]{6}), left after its faulted phase \(passed\)/.exec(r.stderr)?.[1];
  expect(runId, r.stderr).toBeDefined();
  expect(r.stderr).toContain(`capture: netrepro capture --run ${runId}`);
  expect(r.stderr).toContain(`remove:  netrepro clean --run ${runId}`);
  // kept: a clean without --force, which removes dead runs' leftovers, leaves it (its owner has ended)
  expect(await liveRuns()).toContainEqual(
    expect.stringMatching(new RegExp(`^netns run ${runId} \\(\\d+ namespace\\(s\\)\\), kept with run --keep$`)),
  );
  return runId!;
}

/** Removes the run through the CLI and proves nothing of it is left. */
async function cleanAndCheck(runId: string): Promise<void> {
  const r = await cliInProcess(['clean', '--run', runId]);
  expect(r.exitCode).toBe(0);
  expect(r.stdout).toContain(`removed netns nr-${runId}-n-`);
  expect((await readdir('/run/netns').catch(() => [])).filter((n) => n.startsWith(`nr-${runId}-`))).toEqual([]);
  expect(existsSync(`/run/netrepro/${runId}`)).toBe(false);
}

const treeBytes = async (dir: string): Promise<number> => {
  let n = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) n += (await stat(join(e.parentPath, e.name))).size;
  return n;
};

/** What capture may not change: the node's rules with their counters, and its conntrack table's size. */
async function nodeState(runId: string, node: string): Promise<string> {
  const ns = `--net=/run/netns/nr-${runId}-n-${node}`;
  const rules = (await runCommand(['nsenter', ns, 'iptables-save', '-c'])).stdout.replace(/^#.*\n/gm, '');
  const count = (await runCommand(['nsenter', ns, 'conntrack', '-C'])).stdout;
  return `${rules}\nconntrack entries: ${count}`;
}

/**
 * The node's state once it has been still for 3 s: a fresh bridge's kernel sends its IGMP membership reports
 * (224.0.0.22, through OUTPUT, a conntrack entry) in the seconds after it came up, capture or not.
 */
async function settledState(runId: string, node: string): Promise<string> {
  let last = await nodeState(runId, node);
  for (let still = 0, i = 0; still < 3 && i < 30; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = await nodeState(runId, node);
    still = now === last ? still + 1 : 0;
    last = now;
  }
  return last;
}

/**
 * One 2-node lab serves every capture assertion: br_netfilter "not loaded" on node-a (the stand-in of
 * br-netfilter-clusterip-same-node) and FORWARD DROP on both nodes (forward-policy-drop-docker's fault); a lab
 * costs more than all the captures of it.
 */
const TWO_FAULTS = `id: capture-two-faults
title: capture - node-a without br_netfilter, FORWARD DROP on both nodes
topology:
  cni: bridge
  kubeProxy: "1.29"
  nodes:
    - name: node-a
      podCIDR: 10.244.1.0/24
    - name: node-b
      podCIDR: 10.244.2.0/24
  pods:
    - name: client
      node: node-a
    - name: web
      node: node-b
      serve: [{ http: 8080 }]
  services:
    - name: web
      clusterIP: 10.96.0.20
      ports: [{ name: http, port: 80, targetPort: 8080 }]
      endpoints: [web]
probes:
  - id: other-node
    from: client
    http: { to: pod/web, port: 8080 }
baseline:
  expect:
    other-node: ok
fault:
  steps:
    - br-netfilter: { node: node-a, enabled: false }
    - forward-policy: { node: node-a, policy: DROP }
    - forward-policy: { node: node-b, policy: DROP }
  expect:
    other-node: timeout
fixes:
  - name: undo
    steps:
      - br-netfilter: { node: node-a, enabled: true }
      - forward-policy: { node: node-a, policy: ACCEPT }
      - forward-policy: { node: node-b, policy: ACCEPT }
    expect:
      other-node: ok
`;

describe.skipIf(labSkipReason)('netrepro capture --run', () => {
  it('shows br_netfilter "not loaded" on node-a and FORWARD DROP on both nodes of a lab left faulted, changes nothing, reads the same by one script, and clean --run removes it all', async () => {
    const scenario = join(await tempDir(), 'capture-two-faults.yaml');
    await writeFile(scenario, TWO_FAULTS);
    const runId = await keptFaulted(scenario);
    try {
      const dir = await tempDir();
      const before = await settledState(runId, 'node-a');
      let t0 = performance.now();
      const r = await cliInProcess(['capture', '--run', runId, '--conntrack', '--out', join(dir, 'b')]);
      const dirMs = performance.now() - t0;
      expect(r.exitCode, r.stderr).toBe(0);
      expect(await nodeState(runId, 'node-a')).toBe(before);
      t0 = performance.now();
      const tar = await cliInProcess(['capture', '--run', runId, '--out', join(dir, 'b.tar.gz')]);
      const tarMs = performance.now() - t0;
      expect(tar.exitCode, tar.stderr).toBe(0);

      const b = (f: string) => readFile(join(dir, 'b', f), 'utf8');
      const manifest = JSON.parse(await b('manifest.json'));
      expect(manifest).toMatchObject({
        format: 'netrepro-capture/1',
        source: { kind: 'lab', run: runId, kubeconfig: null },
        redacted: false,
        cluster: { unreadable: [] },
      });
      expect(manifest.nodes.map((n: { name: string }) => n.name)).toEqual(['node-a', 'node-b']);
      const node = manifest.nodes[0];
      // a bridge lab's node has no cgroup of its own: the host's tree would show other runs' programs
      expect(node.unreadable).toEqual([
        { what: 'bpf-cgroup', command: ['bpftool', '-j', 'cgroup', 'tree'], why: NO_OWN_CGROUP },
      ]);
      expect(Object.keys(node.files).sort()).toEqual(
        [
          'bpf-net',
          'conntrack',
          'conntrack-stats',
          'ip-addr',
          'ip-link',
          'ip-neigh',
          'ip-route',
          'ip-rule',
          'iptables-save',
          'modules',
          'sysctls',
        ].sort(),
      );
      expect(node.conntrack.captured).toBe(true);
      // the fault: bridge-nf-call-iptables=0 in node-a's namespace, the lab's stand-in for the module not loaded
      expect(JSON.parse(await b('nodes/node-a/sysctls.json'))['net.bridge.bridge-nf-call-iptables']).toBe('0');
      expect(JSON.parse(await b('nodes/node-a/modules.json'))).toEqual({ br_netfilter: false });
      expect(node.moduleEvidence.br_netfilter).toMatch(/^emulated per node namespace/);
      expect(await b('nodes/node-a/iptables-save.txt')).toContain('--comment "default/web:http cluster IP"');
      for (const n of ['node-a', 'node-b']) expect(await b(`nodes/${n}/iptables-save.txt`)).toMatch(/^:FORWARD DROP /m);
      // the lab's own objects, as a cluster lists them
      const services = JSON.parse(await b('cluster/services.json'));
      expect(services.items[0]).toMatchObject({ metadata: { name: 'web' }, spec: { clusterIP: '10.96.0.20' } });
      const pods = JSON.parse(await b('cluster/pods.json'));
      expect(pods.items.map((p: { metadata: { name: string } }) => p.metadata.name).sort()).toEqual(['client', 'web']);
      const nodes = JSON.parse(await b('cluster/nodes.json'));
      expect(nodes.items[0].spec.podCIDR).toBe('10.244.1.0/24');

      const listing = execFileSync('sh', ['-c', 'cd "$1" && find b -type f | sort | xargs wc -c', 'sh', dir], {
        encoding: 'utf8',
      });
      console.log(
        `2-node lab ${runId}: capture to a directory ${Math.round(dirMs)} ms (${await treeBytes(join(dir, 'b'))} bytes, conntrack included), to a .tar.gz ${Math.round(tarMs)} ms (${(await stat(join(dir, 'b.tar.gz'))).size} bytes)\n${listing}`,
      );

      // --node: only the named one
      const one = await cliInProcess(['capture', '--run', runId, '--node', 'node-b', '--out', join(dir, 'one')]);
      expect(one.exitCode, one.stderr).toBe(0);
      expect(await readdir(join(dir, 'one/nodes'))).toEqual(['node-b']);

      // redacted: the mapping beside the bundle, none of the lab's names inside
      const red = await cliInProcess(['capture', '--run', runId, '--redact', '--out', join(dir, 'red')]);
      expect(red.exitCode, red.stderr).toBe(0);
      expect(red.stderr).toContain(`kept outside the bundle: ${join(dir, 'red.redaction.json')}`);
      const mapping = JSON.parse(await readFile(join(dir, 'red.redaction.json'), 'utf8'));
      expect(mapping.service).toEqual({ web: 'svc-1' });
      const redRules = await readFile(join(dir, 'red/nodes/node-a/iptables-save.txt'), 'utf8');
      expect(redRules).toContain('--comment "default/svc-1:http cluster IP"');
      for (const f of [
        'cluster/pods.json',
        'cluster/services.json',
        'cluster/endpointslices.json',
        'nodes/node-a/iptables-save.txt',
      ])
        expect(await readFile(join(dir, 'red', f), 'utf8')).not.toMatch(/(?<![\w-])(web|client)(?![\w-])/);

      // the script kubectl debug runs, here through nsenter: the same outcomes as command by command
      const ns = `/run/netns/nr-${runId}-n-node-a`;
      const commands = nodeCommands(100);
      const scripted = await new ScriptReader(async (script) => {
        const x = await runCommand(['nsenter', `--net=${ns}`, 'sh', '-c', script], { reject: false });
        return { stdout: x.stdout, failure: x.exitCode === 0 ? undefined : x.stderr };
      }).read(commands);
      const direct = await new TargetReader(new NetnsTarget('node/node-a', ns)).read(commands);
      // timers in the link details and the dump's time stamp move between two reads
      const steady = (key: string, s: string) =>
        ['ip-addr', 'ip-link'].includes(key) ? s.replace(/"[a-z_]+_timer":[\d.]+,?/g, '') : s.replace(/^#.*\n/gm, '');
      for (const [key, o] of direct) {
        const s = scripted.get(key)!;
        expect({ key, exit: s.exitCode, notRun: s.notRun }).toEqual({ key, exit: o.exitCode, notRun: o.notRun });
        // conntrack and the host's cgroup tree (a bridge lab's node has no cgroup of its own) change with
        // other labs, this run's neighbours included, between the two reads
        if (key !== 'conntrack' && key !== 'bpf-cgroup') expect(steady(key, s.stdout), key).toBe(steady(key, o.stdout));
      }
    } finally {
      await cleanAndCheck(runId);
    }
  });

  it('refuses an unknown run or node with what to do', async () => {
    const r = await cliInProcess(['capture', '--run', 'ffffff']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('no kept run ffffff on this host');
    expect((await cliInProcess(['run', 'br-netfilter-clusterip-same-node', '--stop-after', 'nope'])).stderr).toContain(
      '--stop-after nope: it has no fix nope (scenario br-netfilter-clusterip-same-node)',
    );
  });
});
