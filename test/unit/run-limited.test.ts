// runLimited: an error (an abort) is thrown only once every item under way has finished, so a lab still
// tearing down is never cut off by the report and the exit that follow.
import { expect, it } from 'vitest';
import { runLimited } from '../../src/engine/run/run-limited.ts';

it('waits for the other items under way before it throws the first error', async () => {
  const done: string[] = [];
  const run = runLimited(['fails', 'tears down'], 2, new AbortController().signal, async (item) => {
    if (item === 'fails') throw new Error('aborted');
    await new Promise((r) => setTimeout(r, 50));
    done.push(item);
  });
  await expect(run).rejects.toThrow('aborted');
  expect(done).toEqual(['tears down']);
});
