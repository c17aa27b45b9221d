// `netrepro capture` on a real Kubernetes v1.20.2 cluster (`--provider local`) left faulted: through --run (the
// node's namespace, the API server's objects through the run's kubeconfig) and through `kubectl debug node/`
// with the cluster's preloaded pod image (the host's /bin/sh chrooted; kubectl 1.20's debug pod is not privileged,
// so the netfilter readers are unreadable, said with why), then `clean --run` leaves nothing of it.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/contract/command.ts';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';
import { findLocalBuild } from '../../src/providers/real/local/local-build.ts';
import { localNames } from '../../src/providers/real/local/local-names.ts';
import { runProcess } from '../child-process.ts';
import { tempDir } from '../lab-support.ts';
import { realSkipReason } from './real-support.ts';

const bin = () => join(PACKAGE_ROOT, 'bin/netrepro.js');
/** netrepro's CLI, in the network namespace `netns` when given. */
const cli = (args: string[], netns?: string) =>
  netns
    ? runProcess('nsenter', [`--net=${netns}`, 'node', bin(), ...args], { cwd: PACKAGE_ROOT })
    : runProcess('node', [bin(), ...args], { cwd: PACKAGE_ROOT });

describe.skipIf(realSkipReason())('netrepro capture on a kept local cluster', () => {
  it('reads the faulted node and the API server, through --run and through kubectl debug', async () => {
    const t0 = performance.now();
    const run = await cli([
      'run',
      'br-netfilter-clusterip-same-node',
      '--provider',
      'local',
      '--profile',
      'kube-proxy-1.20',
      '--keep',
      '--stop-after',
      'faulted',
      '--quiet',
    ]);
    const runId = /kept: \S+ \[[^\]]+\] run ([0-9a-f]{6})/.exec(run.stderr)?.[1];
    expect(runId, run.stderr).toBeDefined();
    const names = localNames(runId!);
    try {
      expect(run.exitCode, run.stderr).toBe(0);
      const keptMs = performance.now() - t0;
      const dir = await tempDir();
      const t1 = performance.now();
      const r = await cli(['capture', '--run', runId!, '--out', join(dir, 'b')]);
      const captureMs = performance.now() - t1;
      expect(r.exitCode, r.stderr).toBe(0);
      const manifest = JSON.parse(await readFile(join(dir, 'b/manifest.json'), 'utf8'));
      expect(manifest).toMatchObject({
        source: { kind: 'local', run: runId, kubeconfig: join(names.state, 'kubeconfig') },
        kubernetes: { serverVersion: 'v1.20.2' },
        cluster: { unreadable: [] },
      });
      const node = names.kubeNode('node-a');
      expect(manifest.nodes[0]).toMatchObject({ name: node, unreadable: [] });
      const b = (f: string) => readFile(join(dir, 'b', f), 'utf8');
      expect(JSON.parse(await b(`nodes/${node}/modules.json`))).toEqual({ br_netfilter: false });
      expect(await b(`nodes/${node}/iptables-save.txt`)).toContain('--comment "default/web:http cluster IP"');
      const slices = JSON.parse(await b('cluster/endpointslices.json'));
      expect(slices.items.some((s: { apiVersion: string }) => s.apiVersion === 'discovery.k8s.io/v1beta1')).toBe(true);

      // kubectl debug node/, run where the API server is reachable: the run's fabric namespace
      const build = findLocalBuild()!;
      const podImage = build.images.podRef;
      const debug = await cli(
        [
          'capture',
          '--kubectl-debug',
          node,
          '--image',
          podImage,
          '--kubeconfig',
          join(names.state, 'kubeconfig'),
          '--kubectl',
          build.bin('kubectl'),
          '--out',
          join(dir, 'debug'),
        ],
        names.netnsPath(names.fabric),
      );
      expect(debug.exitCode, debug.stderr).toBe(0);
      const dm = JSON.parse(await readFile(join(dir, 'debug/manifest.json'), 'utf8'));
      expect(dm.source.kind).toBe('kubectl-debug');
      expect(Object.keys(dm.nodes[0].files), JSON.stringify(dm.nodes[0].unreadable)).toContain('ip-route');
      // the host's ip, not BusyBox's: -j works
      expect(JSON.parse(await readFile(join(dir, `debug/nodes/${node}/ip-route.json`), 'utf8')).length).toBeGreaterThan(
        0,
      );
      expect(dm.nodes[0].unreadable.find((u: { what: string }) => u.what === 'iptables-save')?.why ?? 'read').toMatch(
        /Permission denied|^read$/,
      );
      // its debug pod is deleted: gone within 30 s
      const debugPods = async () =>
        (
          await runCommand([
            'nsenter',
            `--net=${names.netnsPath(names.fabric)}`,
            build.bin('kubectl'),
            '--kubeconfig',
            join(names.state, 'kubeconfig'),
            'get',
            'pods',
            '-o',
            'name',
          ])
        ).stdout
          .split('\n')
          .filter((p) => p.includes('node-debugger'));
      for (let i = 0; i < 30 && (await debugPods()).length > 0; i++) await new Promise((r) => setTimeout(r, 1000));
      expect(await debugPods()).toEqual([]);
      console.log(
        `local run ${runId}: run --keep --stop-after faulted ${Math.round(keptMs / 1000)} s, capture --run ${Math.round(captureMs)} ms; debug unreadable: ${dm.nodes[0].unreadable.map((u: { what: string }) => u.what).join(', ')}`,
      );
    } finally {
      const clean = await cli(['clean', '--run', runId!]);
      expect(clean.exitCode, clean.stderr).toBe(0);
      expect(existsSync(names.state)).toBe(false);
      expect((await readdir('/run/netns').catch(() => [])).filter((n) => n.startsWith(`nr-${runId}-`))).toEqual([]);
    }
  });
});
