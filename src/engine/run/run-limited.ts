// Runs work over items at most `limit` at a time, taking items in order; once `signal` aborts, no new
// item starts (the ones under way finish their teardown).
import { settleAll } from '../../contract/settle-all.ts';

export async function runLimited<T>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !signal.aborted) {
      const i = next++;
      await work(items[i]!, i);
    }
  };
  // every worker settles before an error (an abort) is thrown: the others may still be tearing their labs down
  await settleAll(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
