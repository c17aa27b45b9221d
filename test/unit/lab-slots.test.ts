// LabSlots: at most N labs at once, first come first served.
import { describe, expect, it } from 'vitest';
import { inSlots, LabSlots } from '../../src/engine/run/lab-slots.ts';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('lab slots', () => {
  it('never runs more than N at once, across callers, in the order they asked', async () => {
    const slots = new LabSlots(2);
    const signal = new AbortController().signal;
    let running = 0;
    let most = 0;
    const started: string[] = [];
    const work = (name: string) => async () => {
      started.push(name);
      most = Math.max(most, ++running);
      await tick();
      running--;
      return name;
    };
    // two "scenarios", one with three variants, sharing the slots
    const [a, b] = await Promise.all([
      inSlots(['a1', 'a2', 'a3'], slots, signal, (n) => work(n)()),
      inSlots(['b1'], slots, signal, (n) => work(n)()),
    ]);
    expect(a).toEqual(['a1', 'a2', 'a3']);
    expect(b).toEqual(['b1']);
    expect(most).toBe(2);
    expect(started).toEqual(['a1', 'a2', 'a3', 'b1']);
  });

  it('waits for every item before throwing the first error in item order', async () => {
    const slots = new LabSlots(3);
    const done: number[] = [];
    const run = inSlots([0, 1, 2], slots, new AbortController().signal, async (i) => {
      await new Promise((r) => setTimeout(r, (3 - i) * 5));
      done.push(i);
      if (i > 0) throw new Error(`variant ${i}`);
      return i;
    });
    await expect(run).rejects.toThrow('variant 1');
    expect(done.sort()).toEqual([0, 1, 2]);
  });

  it('an abort drops waiters without running them; the slot holders finish', async () => {
    const slots = new LabSlots(1);
    const controller = new AbortController();
    const ran: number[] = [];
    const run = inSlots([0, 1], slots, controller.signal, async (i) => {
      ran.push(i);
      controller.abort();
      await tick();
    });
    await expect(run).rejects.toMatchObject({ code: 'ABORTED' });
    expect(ran).toEqual([0]);
  });
});
