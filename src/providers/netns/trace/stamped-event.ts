// A trace event as the lab's monitors record it: stamped on arrival (performance.now()), and made relative
// to a probe's start when the probe takes it.
import type { TraceEvent } from '../../../model/trace-events.ts';

export type Stamped = TraceEvent & { stamp: number };

/** `e` with `at`: ms since `start`, to a tenth. */
export function relative(e: Stamped, start: number): TraceEvent {
  const { stamp, ...event } = e;
  return { ...event, at: Math.round((stamp - start) * 10) / 10 } as TraceEvent;
}
