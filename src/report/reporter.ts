// Reporters see events and results only. Every hook is optional; reporters are chosen by name.
import type { RunEvent, RunResult } from '../engine/run/results.ts';

export interface Reporter {
  onEvent?(event: RunEvent): void;
  onRunEnd?(result: RunResult): Promise<void>;
}

/** Fans events out to every reporter. */
export function combineReporters(reporters: readonly Reporter[]): Required<Reporter> {
  return {
    onEvent: (event) => {
      for (const r of reporters) r.onEvent?.(event);
    },
    onRunEnd: async (result) => {
      for (const r of reporters) await r.onRunEnd?.(result);
    },
  };
}
