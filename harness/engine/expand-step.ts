// Fault and fix steps are data. Named steps are macros over two primitives: a command on a target
// (argv, never a shell string) or a lab action the provider performs its own way.
import type { LabAction, StartedCluster } from '../../clusters/provider.ts';
import { HarnessError } from '../model/errors.ts';
import type { StepSpec } from '../model/scenario-schema.ts';
import { durationMs } from '../model/duration.ts';

export interface Command {
  kind: 'command';
  on: string;
  argv: string[];
  /** What proves it worked: an exit status (`any` for none) and a line it must print. */
  expect: { exit: number | 'any'; prints?: string };
  /** A command whose output must equal `value` afterwards: the change really took effect (a sysctl read back). */
  readBack?: { argv: string[]; value: string };
  /** Runs alongside the probes of this phase and every later one (a trigger that keeps firing). */
  background?: { leadMs: number };
  timeoutMs: number;
}

export type Expanded = Command | LabAction;

/**
 * `{pod/web}` is replaced by that pod's address, `{cgroup/node-a}` by a lab path, `{veth/web}` by the
 * pod's host-side interface, `{port/node-a}` by the node's port on the fabric, `{bin/inject-ahead}` by
 * the path of a lab-built helper program.
 */
const PLACEHOLDER = /\{((?:pod|svc|node|host|cgroup|bpffs|veth|port|bin)\/[a-z][a-z0-9-]*)\}/g;

/** How a placeholder resolves on a cluster: addresses for pod/svc/node/host, lab names for the rest. */
export function placeholderResolver(cluster: Pick<StartedCluster, 'address' | 'path'>): (ref: string) => string {
  return (ref) => (/^(pod|svc|node|host)\//.test(ref) ? cluster.address(ref) : cluster.path(ref));
}

export function substitute(argv: readonly string[], resolve: (ref: string) => string): string[] {
  return argv.map((a) => a.replace(PLACEHOLDER, (_, ref: string) => resolve(ref)));
}

export function commandArgv(cmd: string | string[]): string[] {
  return typeof cmd === 'string' ? splitWords(cmd) : cmd;
}

/** A sysctl written, then read back: the value must be what was written (a read-only or missing key fails). */
function sysctl(on: string, name: string, value: string | number): Command {
  return { kind: 'command', on, argv: ['sysctl', '-w', `${name}=${value}`], expect: { exit: 0 }, readBack: { argv: ['sysctl', '-n', name], value: String(value) }, timeoutMs: 10_000 };
}

export function expandStep(step: StepSpec, resolve: (ref: string) => string): Expanded[] {
  if (step.run) {
    const { on, cmd, background, lead, timeout, expect } = step.run;
    return [{ kind: 'command', on, argv: substitute(commandArgv(cmd), resolve), expect, timeoutMs: durationMs(timeout), ...(background ? { background: { leadMs: durationMs(lead) } } : {}) }];
  }
  if (step.sysctl) return [sysctl(step.sysctl.on, step.sysctl.name, step.sysctl.value)];
  // per-namespace since Linux 5.3: 0 in one node's namespace is that node booting without br_netfilter
  if (step['br-netfilter']) return [sysctl(`node/${step['br-netfilter'].node}`, 'net.bridge.bridge-nf-call-iptables', step['br-netfilter'].enabled ? 1 : 0)];
  if (step.start) return [{ kind: 'start', ...step.start }];
  if (step.reboot) return [{ kind: 'reboot', ...step.reboot }];
  if (step['sock-lb-stale-program']) return [{ kind: 'sock-lb-stale-program', ...step['sock-lb-stale-program'] }];
  if (step['sock-lb-detach-stale']) return [{ kind: 'sock-lb-detach-stale', ...step['sock-lb-detach-stale'] }];
  throw new HarnessError('SCENARIO_INVALID', `unknown step: ${Object.keys(step).join(', ')}`);
}

/** Splits on spaces, honouring '...' and "..." quotes. No expansion of any kind: the words go to execve as they are. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  const re = /'([^']*)'|"([^"]*)"|(\S+)/g;
  let current = '';
  let last = -1;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const piece = m[1] ?? m[2] ?? m[3] ?? '';
    if (m.index === last) current += piece;
    else {
      if (last !== -1) words.push(current);
      current = piece;
    }
    last = re.lastIndex;
  }
  if (last !== -1) words.push(current);
  return words;
}
