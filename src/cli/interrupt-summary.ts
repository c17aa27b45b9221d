// The one line an interrupted run ends with: which labs the interrupt tore down (scenarios under way
// when it came, by fix variant), how many scenarios had finished before it and how many never started.
// Built from the run's events, so it says the same whether the interrupt came during provisioning, a
// probe or a teardown.
import type { RunEvent } from '../engine/run/results.ts';
import type { Reporter } from '../report/reporter.ts';

export interface InterruptSummary extends Reporter {
  line(signal: string, exitCode: number, scenarios: number): string;
}

/** `interrupt`: aborted by the signal; a scenario that ends after it was cut short, not finished. */
export function interruptSummary(interrupt: AbortSignal): InterruptSummary {
  const underWay = new Map<string, string[]>(); // scenario -> its fix variants whose lab came up
  let started = 0;
  let finished = 0;
  return {
    onEvent(event: RunEvent) {
      if (event.kind === 'scenario-start') {
        started += 1;
        underWay.set(event.id, []);
      }
      if (event.kind === 'lab-ready') underWay.get(event.id)?.push(event.variant);
      if (event.kind === 'scenario-end' && !interrupt.aborted) {
        underWay.delete(event.result.id);
        finished += 1;
      }
    },
    line(signal, exitCode, scenarios) {
      const torn = [...underWay].map(
        ([id, variants]) =>
          `${id} (${variants.length ? `fix ${variants.map((v) => `"${v}"`).join(', ')}` : 'while being built'})`,
      );
      const what = torn.length ? `tore down the labs of ${torn.join('; ')}` : 'no lab was up when it came';
      return `${signal}: ${what}; ${finished} of ${scenarios} scenario(s) finished before it, ${scenarios - started} not started; exiting ${exitCode}`;
    },
  };
}
