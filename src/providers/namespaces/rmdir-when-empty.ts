// Removing a cgroup whose processes were just killed.
import { rmdir } from 'node:fs/promises';

/** A cgroup directory can only go once its killed processes have exited (EBUSY until then): retry for up to `waitMs`. */
export async function rmdirWhenEmpty(dir: string, waitMs = 2000): Promise<void> {
  for (const deadline = Date.now() + waitMs; ; ) {
    const error = await rmdir(dir).then(
      () => undefined,
      (e: NodeJS.ErrnoException) => e,
    );
    if (error?.code !== 'EBUSY' || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}
