// Fault and fix steps are data. Named steps are macros over the one generic step: run argv on a target.
import { HarnessError } from '../model/errors.ts';
import type { StepSpec } from '../model/scenario-schema.ts';

export interface Command {
  on: string;
  argv: string[];
}

/** `{pod/web}` in a run step's argv is replaced by that pod's address. */
const REF = /\{((?:pod|svc|node)\/[a-z][a-z0-9-]*)\}/g;

export function expandStep(step: StepSpec, address: (ref: string) => string): Command[] {
  if (step.run) {
    const argv = typeof step.run.cmd === 'string' ? splitWords(step.run.cmd) : step.run.cmd;
    return [{ on: step.run.on, argv: argv.map((a) => a.replace(REF, (_, ref: string) => address(ref))) }];
  }
  if (step.sysctl) return [{ on: step.sysctl.on, argv: ['sysctl', '-w', `${step.sysctl.name}=${step.sysctl.value}`] }];
  if (step['br-netfilter']) {
    const { node, enabled } = step['br-netfilter'];
    // per-namespace since Linux 5.3: 0 in one node's namespace is that node booting without br_netfilter
    return [{ on: `node/${node}`, argv: ['sysctl', '-w', `net.bridge.bridge-nf-call-iptables=${enabled ? 1 : 0}`] }];
  }
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
