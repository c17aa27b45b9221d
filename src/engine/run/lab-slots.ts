// At most N labs at once, first come first served: a scenario's fix variants take a slot per lab
// (one slot: one after another; as many as variants: side by side).
import { HarnessError } from '../../model/errors.ts';

export class LabSlots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    this.free = Math.max(1, size);
  }

  /** Runs `work` once a slot is free; the slot is given back however `work` ends. */
  async run<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    await this.acquire(signal);
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(new HarnessError('ABORTED', 'aborted before a lab slot was free'));
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const take = () => {
        signal.removeEventListener('abort', abandon);
        resolve();
      };
      const abandon = () => {
        this.waiting.splice(this.waiting.indexOf(take), 1);
        reject(new HarnessError('ABORTED', 'aborted before a lab slot was free'));
      };
      signal.addEventListener('abort', abandon, { once: true });
      this.waiting.push(take);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next)
      next(); // the slot passes straight on
    else this.free++;
  }
}

/**
 * `work` for every item, each in a slot of `slots`, all queued at once in item order; results in item
 * order. Waits for every item to settle (each one tears its lab down on every path) before it throws
 * the first error in item order, so nothing is still running when the caller reports.
 */
export async function inSlots<T, R>(
  items: readonly T[],
  slots: LabSlots,
  signal: AbortSignal,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const settled = await Promise.allSettled(items.map((item, i) => slots.run(signal, () => work(item, i))));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<R>).value);
}
