// `netrepro clean`: remove leftovers of earlier runs by the run prefix (labs of dead owners only,
// unless --force).
import { cleanLeftovers } from '../../clusters/netns/clean-leftovers.ts';
import { cleanRealLeftovers } from '../../clusters/real/clean-real-leftovers.ts';

export default async function clean(options: { force?: boolean }): Promise<void> {
  const force = options.force ?? false;
  const removed = [...(await cleanLeftovers({ force })), ...(await cleanRealLeftovers({ force }))];
  process.stdout.write(removed.length ? removed.map((r) => `removed ${r}\n`).join('') : 'nothing to clean\n');
}
