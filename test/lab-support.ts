// Lab tests need root and network namespaces. Where the lab cannot run they are skipped with the
// reason; under CI (CI=true) they must run, so an unusable environment fails instead of skipping.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { netnsAvailability } from '../clusters/netns/netns-provider.ts';

/** A temporary directory (e.g. for evidence: pcaps of MBs) removed when the test ends, pass or fail. */
export async function tempDir(prefix = 'netrepro-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const availability = await netnsAvailability();

export const labSkipReason: string | undefined = availability.ok ? undefined : `${availability.reason} (${availability.hint})`;

if (labSkipReason && process.env.CI === 'true') {
  throw new Error(`CI=true but the netns lab cannot run here: ${labSkipReason}`);
}
if (labSkipReason) console.warn(`netns lab tests skipped: ${labSkipReason}`);
