// Every run gets a short random id; every name a provider creates starts with `nr-<id>-`,
// so parallel runs never collide and `netrepro clean` can find a crashed run's leftovers.
import { randomBytes } from 'node:crypto';

/** `nr-<6 hex>-`: the run prefix; anything without it is not ours. */
export const RUN_PREFIX = /^nr-([0-9a-f]{6})-/;

export function newRunId(): string {
  return randomBytes(3).toString('hex');
}

export const runPrefix = (runId: string) => `nr-${runId}-`;
