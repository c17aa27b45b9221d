// Reporters see events and results only. Every hook is optional; reporters are chosen by name.
import type { RunEvent, RunResult } from '../engine/run/results.ts';
import { HarnessError } from '../model/errors.ts';

export interface Reporter {
  onEvent?(event: RunEvent): void;
  onRunEnd?(result: RunResult): Promise<void>;
}

/** Fans events out to every reporter. At the end every reporter writes, even after another failed; the failures then throw as one. */
export function combineReporters(reporters: readonly Reporter[]): Required<Reporter> {
  return {
    onEvent: (event) => {
      for (const r of reporters) r.onEvent?.(event);
    },
    onRunEnd: async (result) => {
      const settled = await Promise.allSettled(reporters.map((r) => r.onRunEnd?.(result)));
      const failed = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
      if (failed.length === 1) throw failed[0];
      if (failed.length > 1) throw combined(failed);
    },
  };
}

function combined(errors: readonly unknown[]): Error {
  const harness = errors.filter((e): e is HarnessError => e instanceof HarnessError);
  if (harness.length < errors.length) return errors.find((e) => !(e instanceof HarnessError)) as Error;
  const hints = [...new Set(harness.map((e) => e.hint).filter(Boolean))];
  return new HarnessError(harness[0]!.code, harness.map((e) => e.message).join('\n'), hints.join('\n'));
}
