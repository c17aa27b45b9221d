// What the spinner says while scenarios run: how many are done, then a line per running scenario with the
// phase each of its labs is in and how long it has been running, each cut to the terminal's width.
import type { PhaseName } from '../engine/run/results.ts';
import type { Colors } from './colors.ts';
import { truncateLine } from './fit-width.ts';

interface Running {
  since: number;
  /** The phase of each fix variant's lab, in the order the labs came up. */
  phases: Map<string, PhaseName>;
}

export class RunningScenarios {
  private readonly running = new Map<string, Running>();
  private done = 0;

  constructor(
    private readonly total: number,
    private readonly now: () => number = Date.now,
  ) {}

  start(id: string): void {
    this.running.set(id, { since: this.now(), phases: new Map() });
  }

  phase(id: string, variant: string, phase: PhaseName): void {
    this.running.get(id)?.phases.set(variant, phase);
  }

  end(id: string): void {
    if (this.running.delete(id)) this.done++;
  }

  /** The spinner's text: the count first (the spinner's own line), then one line per running scenario. */
  text(pc: Colors, columns: number | undefined, rows = 24): string {
    const head = pc.dim(`${this.done}/${this.total} done`);
    // the count's line and a line to spare stay on screen: a block taller than the terminal cannot be cleared
    const room = Math.max(1, rows - 2);
    const all = [...this.running];
    const shown = all.length > room ? all.slice(0, room - 1) : all;
    const lines = shown.map(([id, r]) => {
      const seconds = ((this.now() - r.since) / 1000).toFixed(0);
      return truncateLine(`  ${id}  ${pc.dim(`${where(r.phases)} · ${seconds} s`)}`, columns);
    });
    if (shown.length < all.length) lines.push(pc.dim(`  … and ${all.length - shown.length} more`));
    return [head, ...lines].join('\n');
  }
}

/** `faulted` for one lab; `be-liberal: fixed, restart: faulted` where fix variants run side by side. */
function where(phases: Map<string, PhaseName>): string {
  if (phases.size === 0) return 'provisioning';
  if (phases.size === 1) return [...phases.values()][0]!;
  return [...phases].map(([variant, phase]) => `${variant}: ${phase}`).join(', ');
}
