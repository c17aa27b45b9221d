// Exit codes other tools rely on: 0 every expectation held; 1 an expectation failed or a run errored;
// 2 invalid input; 3 environment unusable; 130/143 interrupted (after teardown).
import type { HarnessError } from '../model/errors.ts';

export const EXIT = { ok: 0, failed: 1, invalid: 2, environment: 3 } as const;

/** 128 + the signal that interrupted the run: 130 SIGINT, 141 SIGPIPE, 143 SIGTERM. */
export const isInterruption = (code: number) => code > 128;

export function exitCodeOf(e: HarnessError): number {
  return e.code === 'SCENARIO_INVALID' || e.code === 'USAGE'
    ? EXIT.invalid
    : e.code === 'ENVIRONMENT'
      ? EXIT.environment
      : EXIT.failed;
}
