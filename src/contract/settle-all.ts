// Parallel set-up whose failure must not outrun its siblings.

/** Like Promise.all, but waits for every one to settle first: nothing may still be building while the lab is torn down. */
export async function settleAll(work: Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(work);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
