// The API client that follows its kubeconfig: loaded once while the file stays, anew once it is written again.
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeApi } from '../../src/providers/real/common/kube-api.ts';
import { kubeconfigFollowingApi } from '../../src/providers/real/containers/kubeconfig-following-api.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('kubeconfigFollowingApi', () => {
  it('loads the client anew when the kubeconfig was written again, not before', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netrepro-kc-'));
    dirs.push(dir);
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, 'server: https://127.0.0.1:32771\n');
    let loads = 0;
    const api = kubeconfigFollowingApi({ kubeconfig, context: 'c' }, () => {
      const n = ++loads;
      return { listNodes: async () => [{ name: `loaded-${n}`, internalIP: '192.168.49.2' }] } as unknown as KubeApi;
    });
    expect((await api.listNodes())[0]?.name).toBe('loaded-1');
    expect((await api.listNodes())[0]?.name).toBe('loaded-1');
    // `minikube update-context` writes the API server's new host port
    writeFileSync(kubeconfig, 'server: https://127.0.0.1:32790\n');
    utimesSync(kubeconfig, new Date(), new Date(Date.now() + 5000));
    expect((await api.listNodes())[0]?.name).toBe('loaded-2');
    expect(loads).toBe(2);
  });
});
