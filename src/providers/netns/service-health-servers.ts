// kube-proxy's service health servers in the netns lab: for every node and every Service that needs a health
// check (src/dataplane/service-health.ts), one server process in the node's network namespace, as kube-proxy
// listens there. A sync (boot, a Service or endpoint step) writes each server's local endpoint count to the file
// it reads for every request, opens the ports a Service gained and closes those it lost (SyncServices).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PodPlacement } from '../../contract/kube-objects.ts';
import { endpointSlices, serviceObject } from '../../contract/kube-objects.ts';
import type { Spawned } from '../../contract/command.ts';
import type { Target } from '../../contract/provider.ts';
import type { TopologySpec } from '../../model/scenario-schema.ts';
import type { KubeProxySettings } from '../../dataplane/node-iptables.ts';
import { kubeProxyLayout } from '../../dataplane/kube-proxy-layout.ts';
import { serviceHealth } from '../../dataplane/service-health.ts';
import { helperBinary } from '../namespaces/helper-build.ts';

const READY_TIMEOUT_MS = 5000;

interface Server {
  port: number;
  process: Spawned;
}

/** What the servers need of their lab: its Services now, each node's kube-proxy, a place for files, its nodes. */
export interface HealthServerLab {
  readonly topology: TopologySpec;
  readonly names: { readonly stateDir: string };
  kubeProxy(node: string): KubeProxySettings;
  node(name: string): Target;
  /** Killed at the lab's teardown. */
  track(process: Spawned): void;
}

export class ServiceHealthServers {
  /** `node ns/name` -> its server. */
  private readonly servers = new Map<string, Server>();

  constructor(private readonly lab: HealthServerLab) {}

  /** Whether any Service of the lab asks for a health check (else nothing is built or started). */
  get wanted(): boolean {
    return this.lab.topology.services.some((s) => s.healthCheckNodePort !== undefined) || this.servers.size > 0;
  }

  /** kube-proxy's health servers on `node` brought in line with the lab's Services and endpoints now. */
  async sync(node: string, placements: ReadonlyMap<string, PodPlacement>): Promise<void> {
    const { topology } = this.lab;
    const health = serviceHealth(
      kubeProxyLayout(this.lab.kubeProxy(node).release),
      topology.services.map(serviceObject),
      topology.services.flatMap((s) => endpointSlices(s, placements, topology.pods)),
      node,
    );
    const dir = join(this.lab.names.stateDir, 'health-check');
    await mkdir(dir, { recursive: true });
    const wanted = new Map(health.map((h) => [`${node} ${h.namespace}/${h.name}`, h.port]));
    // a Service that no longer needs one, or has another port: its listener closed
    for (const [key, server] of this.servers)
      if (key.startsWith(`${node} `) && wanted.get(key) !== server.port) {
        this.servers.delete(key);
        await server.process.stop('SIGKILL');
      }
    for (const h of health) {
      const file = join(dir, `${node}.${h.namespace}.${h.name}`);
      await writeFile(file, `${h.localEndpoints}\n`);
      const key = `${node} ${h.namespace}/${h.name}`;
      if (this.servers.get(key)?.port === h.port) continue;
      const argv = [
        await helperBinary('health-check'),
        `--port=${h.port}`,
        `--namespace=${h.namespace}`,
        `--name=${h.name}`,
        `--endpoints=${file}`,
      ];
      const process = this.lab.node(node).spawn(argv);
      this.lab.track(process);
      this.servers.set(key, { port: h.port, process });
      await process.waitFor(/^ready /, READY_TIMEOUT_MS);
    }
  }
}
