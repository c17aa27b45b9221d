// Every name the lab creates carries the run prefix, so parallel runs never collide and
// `netrepro clean` can find the leftovers of a crashed run (and nothing else).
import { randomBytes } from 'node:crypto';

export const STATE_ROOT = '/run/netrepro';
export const NETNS_DIR = '/run/netns';
/** `nr-<6 hex>-`: the run prefix; anything else is not ours. */
export const RUN_PREFIX = /^nr-([0-9a-f]{6})-/;

export function newRunId(): string {
  return randomBytes(3).toString('hex');
}

export function labNames(runId: string) {
  const prefix = `nr-${runId}-`;
  return {
    prefix,
    stateDir: `${STATE_ROOT}/${runId}`,
    fabric: `${prefix}fabric`,
    node: (name: string) => `${prefix}n-${name}`,
    pod: (name: string) => `${prefix}p-${name}`,
    netnsPath: (ns: string) => `${NETNS_DIR}/${ns}`,
  };
}

export type LabNames = ReturnType<typeof labNames>;
