// The native spawner's own promises, beyond what command.test.ts checks through runCommand: it never
// leaves a child behind when the harness goes, however it goes (its stdin closes: SIGTERM to each), and
// a lab's spawner ends with the lab's teardown.
import * as childProcess from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { CommandRunner } from '../../src/contract/command.ts';
import { NativeSpawner } from '../../src/contract/native-spawner.ts';
import { helperBinary } from '../../src/providers/namespaces/helper-build.ts';
import { startLabCommands } from '../../src/providers/netns/native-commands.ts';

/** A request frame: u32 length, u8 type, u32 id, payload (see spawner.c). */
function frame(type: string, id: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUInt32LE(5 + payload.length, 0);
  head.write(type, 4, 'latin1');
  head.writeUInt32LE(id, 5);
  return Buffer.concat([head, payload]);
}

/**
 * The spawner's first reply frame, however the pipe splits it into 'data' chunks. The stream stays
 * open (the spawner still writes to it while it ends its children).
 */
function firstFrame(stdout: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const complete = () => received.length >= 4 && received.length >= 4 + received.readUInt32LE(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (!complete()) return;
      stdout.off('data', onData);
      stdout.off('end', onEnd);
      resolve(received.subarray(0, 4 + received.readUInt32LE(0)));
    };
    const onEnd = () => reject(new Error(`the spawner closed its stdout after ${received.length} byte(s)`));
    stdout.on('data', onData);
    stdout.on('end', onEnd);
  });
}

describe('native spawner', () => {
  it('at EOF on its stdin (the harness died) it SIGTERMs every child it started and exits', async () => {
    const spawner = childProcess.spawn(await helperBinary('spawner'), [], { stdio: ['pipe', 'pipe', 'inherit'] });
    const strings = `${['', '', '', '0', 'sleep', '30'].join('\0')}\0`;
    spawner.stdin.write(frame('S', 1, Buffer.concat([Buffer.from([0]), Buffer.from(strings)])));
    const started = await firstFrame(spawner.stdout);
    expect(started.toString('latin1', 4, 5)).toBe('P');
    const pid = started.readInt32LE(9);
    expect(existsSync(`/proc/${pid}`)).toBe(true);
    spawner.stdin.end();
    await once(spawner, 'exit');
    // the sleep was its child: reaped by init once the spawner is gone, or by the spawner's exit path
    for (let i = 0; i < 50 && existsSync(`/proc/${pid}`); i++) await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(`/proc/${pid}`)).toBe(false);
  });
});

describe("a lab's spawner", () => {
  it('close() ends it without reporting it lost, and a command still running ends with it', async () => {
    const lost: string[] = [];
    const spawner = new NativeSpawner(await helperBinary('spawner'), (why) => lost.push(why));
    const runner = new CommandRunner((argv, options) => spawner.spawn(argv, options));
    const sleeping = runner.spawn(['sleep', '30']);
    await vi.waitFor(() => expect(sleeping.pid).toBeGreaterThan(0));
    await spawner.close();
    expect((await sleeping.stop()).exitCode).toBeUndefined();
    expect(lost).toEqual([]);
  });

  it("the lab's commands still run after its teardown ended the spawner (through node:child_process)", async () => {
    const commands = await startLabCommands();
    expect((await commands.runner.exec(['sh', '-c', 'echo before'])).stdout).toBe('before\n');
    await commands.close();
    expect((await commands.runner.exec(['sh', '-c', 'echo after'])).stdout).toBe('after\n');
  });
});
