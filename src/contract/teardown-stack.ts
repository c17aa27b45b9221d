// One way for every provider to take down what it created: each thing registers its undo as it is
// created, and the stack runs them newest first, each one even when an earlier one failed, once
// (later calls get the same promise). Correct after a partial provisioning by construction.
import { HarnessError } from '../model/errors.ts';

export class TeardownStack {
  private readonly entries: { what: string; action: () => Promise<unknown> }[] = [];
  private done?: Promise<void>;

  constructor(private readonly log: (line: string) => void = () => {}) {}

  /**
   * Registers how to undo something just created (or about to be: a half-created thing is undone too).
   * After teardown began (a parallel branch of the provisioning failed, an abort), the undo runs at once
   * and the creator is stopped with LAB_FAILED, so nothing is created behind the teardown's back.
   */
  push(what: string, action: () => Promise<unknown>): void {
    if (this.done !== undefined) {
      void action().then(
        () => this.log(`teardown: ${what} (registered late)`),
        (e: Error) => this.log(`teardown failed: ${what} (registered late): ${e.message}`),
      );
      throw new HarnessError('LAB_FAILED', `${what}: registered after teardown began; undone at once`);
    }
    this.entries.push({ what, action });
  }

  get size(): number {
    return this.entries.length;
  }

  /** Newest first; the failures are reported together at the end (HarnessError LAB_FAILED). */
  run(): Promise<void> {
    this.done ??= this.unwind();
    return this.done;
  }

  private async unwind(): Promise<void> {
    const failures: string[] = [];
    for (const { what, action } of [...this.entries].reverse()) {
      try {
        await action();
        this.log(`teardown: ${what}`);
      } catch (e) {
        failures.push(`${what}: ${(e as Error).message}`);
      }
    }
    if (failures.length)
      throw new HarnessError(
        'LAB_FAILED',
        `teardown incomplete: ${failures.join('; ')}`,
        '`netrepro clean` removes leftovers by the run prefix',
      );
  }
}
