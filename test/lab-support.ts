// Lab tests need root and network namespaces. Where the lab cannot run they are skipped with the
// reason; under CI (CI=true) they must run, so an unusable environment fails instead of skipping.
import { netnsAvailability } from '../clusters/netns/netns-provider.ts';

const availability = await netnsAvailability();

export const labSkipReason: string | undefined = availability.ok ? undefined : `${availability.reason} (${availability.hint})`;

if (labSkipReason && process.env.CI === 'true') {
  throw new Error(`CI=true but the netns lab cannot run here: ${labSkipReason}`);
}
if (labSkipReason) console.warn(`netns lab tests skipped: ${labSkipReason}`);
