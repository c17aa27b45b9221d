// The real components as the lab's oracle: a local cluster (real kube-apiserver, kubelet and kube-proxy
// v1.20.2) holding every kind of Service the lab's render covers, each node's `iptables-save` compared with
// `netrepro render --profile kube-proxy-1.20` for the same topology. Normalised away, and nothing else:
// counters, the canary chains (KUBE-PROXY-CANARY, KUBE-KUBELET-CANARY: kube-proxy's and kubelet's flush
// detection, not modelled), the `default/kubernetes` Service (an input the lab does not have), and the
// order of the Service rules in KUBE-SERVICES and KUBE-NODEPORTS (a Go map upstream). Then each node's
// kube-proxy is restarted with another configuration and compared with the render of that configuration.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderIptables } from '../../src/dataplane/render-node.ts';
import { LocalProvider } from '../../src/providers/real/local/local-provider.ts';
import type { StartedCluster } from '../../src/contract/provider.ts';
import { newRunId, runPrefix } from '../../src/contract/run-id.ts';
import { realSkipReason } from './real-support.ts';
import { normalise, ORACLE_TOPOLOGY } from './oracle-topology.ts';
import { healthBody, healthStatus } from '../../src/dataplane/service-health.ts';

const skip = realSkipReason();

describe.skipIf(skip)(
  `real kube-proxy and kubelet v1.20.2 against the lab's 1.20 render${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let cluster: StartedCluster | undefined;
    const log: string[] = [];

    beforeAll(async () => {
      const runId = newRunId();
      cluster = await new LocalProvider().provision(ORACLE_TOPOLOGY, {
        runId,
        prefix: runPrefix(runId),
        signal: new AbortController().signal,
        log: (l) => log.push(l),
      });
    });
    afterAll(async () => {
      await cluster?.destroy();
    });

    for (const node of ['node-a', 'node-b']) {
      it(`${node}: every rule of every Service kind is the render's`, async () => {
        const real = normalise((await cluster!.node(node).exec(['iptables-save'])).stdout);
        const render = normalise(renderIptables(ORACLE_TOPOLOGY, node));
        const missing = render.filter((l) => !real.includes(l));
        const extra = real.filter((l) => !render.includes(l));
        expect({ missing, extra }).toEqual({ missing: [], extra: [] });
        // and in the same order, apart from the Service rules of KUBE-SERVICES/KUBE-NODEPORTS
        expect(real).toEqual(render);
      });
    }

    // kube-proxy's health check of lb-local: what the lab's server (agent/health-check.c) answers, header by header
    for (const [node, count] of [
      ['node-a', 1],
      ['node-b', 0],
    ] as const) {
      it(`${node}: the health check answers as the lab's health-check server does (localEndpoints ${count})`, async () => {
        const r = await cluster!
          .node(node)
          .exec(['curl', '-sS', '-i', `http://${cluster!.address(`node/${node}`)}:32100/`]);
        const [head = '', body] = r.stdout.split('\r\n\r\n');
        const lines = head.split('\r\n').map((l) => l.replace(/^Date: .*/, 'Date: -'));
        const expected = healthBody('default', 'lb-local', count);
        expect({ lines, body }).toEqual({
          lines: [
            `HTTP/1.1 ${healthStatus(count)}`,
            'Content-Type: application/json',
            'X-Content-Type-Options: nosniff',
            'Date: -',
            `Content-Length: ${expected.length}`,
          ],
          body: expected,
        });
      });
    }

    // restarted with another configuration: node-a without a cluster CIDR, node-b with masqueradeAll
    const restarts = { 'node-a': { clusterCIDR: '' }, 'node-b': { masqueradeAll: true } } as const;
    for (const [node, config] of Object.entries(restarts)) {
      it(`${node}: kube-proxy restarted with ${JSON.stringify(config)} writes the render of that configuration`, async () => {
        await cluster!.perform({ kind: 'start', node, component: 'kube-proxy', config });
        const real = normalise((await cluster!.node(node).exec(['iptables-save'])).stdout);
        const render = normalise(renderIptables({ ...ORACLE_TOPOLOGY, kubeProxyConfig: config }, node));
        expect({
          missing: render.filter((l) => !real.includes(l)),
          extra: real.filter((l) => !render.includes(l)),
        }).toEqual({ missing: [], extra: [] });
        expect(real).toEqual(render);
      });
    }
  },
);
