// Runs work over items at most `limit` at a time, taking items in order; once `signal` aborts, no new
// item starts (the ones under way finish their teardown).
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
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
