// The process runner every lab and cluster command goes through: output, exit codes, input and
// environment, deadlines, cancellation, early stops, programs that cannot start, readiness lines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandRunner, defaultRunner } from '../../src/contract/command.ts';
import { NativeSpawner } from '../../src/contract/native-spawner.ts';
import { helperBinary } from '../../src/providers/namespaces/helper-build.ts';
import { CommandFailedError, HarnessError } from '../../src/model/errors.ts';

// every behaviour holds whichever way the process starts: node:child_process, or the native spawner
describe.each(['node:child_process', 'native spawner'])('through %s', (how) => {
  let runner = defaultRunner;
  let spawner: NativeSpawner | undefined;
  beforeAll(async () => {
    if (how !== 'native spawner') return;
    const native = new NativeSpawner(await helperBinary('spawner'), () => {});
    spawner = native;
    runner = new CommandRunner((argv, options) => native.spawn(argv, options));
  });
  afterAll(() => spawner?.close());
  const runCommand: CommandRunner['exec'] = (...args) => runner.exec(...args);
  const spawnCommand = ((argv, options) => runner.spawn(argv, options)) as CommandRunner['spawn'];

  describe('runCommand', () => {
    it('collects stdout and stderr as printed (final newline kept)', async () => {
      const r = await runCommand(['sh', '-c', 'echo out; echo err >&2']);
      expect(r).toMatchObject({ exitCode: 0, stdout: 'out\n', stderr: 'err\n', timedOut: false, stopped: false });
    });

    it('a non-zero exit throws CommandFailedError with argv, code and the output tail; reject: false returns it', async () => {
      const argv = ['sh', '-c', 'echo why >&2; exit 3'];
      const error = await runCommand(argv, {}, 'node/a').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CommandFailedError);
      expect(error).toMatchObject({ argv, exitCode: 3, stderr: 'why\n' });
      expect((error as Error).message).toMatch(/on node\/a \(exit 3\).*\nwhy/s);
      expect(await runCommand(argv, { reject: false })).toMatchObject({ exitCode: 3 });
    });

    it('feeds `input` on stdin; without it stdin is empty, so a reader does not wait', async () => {
      expect((await runCommand(['sh', '-c', 'read a; read b; echo "$b $a"'], { input: 'a\nb\n' })).stdout).toBe(
        'b a\n',
      );
      expect((await runCommand(['sh', '-c', 'read a; echo "[$a]"'], { timeoutMs: 2000, reject: false })).stdout).toBe(
        '[]\n',
      );
    });

    it('adds `env` to the environment it inherits', async () => {
      const r = await runCommand(['sh', '-c', 'echo "$NR_TEST_VAR:${PATH:+path}"'], { env: { NR_TEST_VAR: 'x' } });
      expect(r.stdout).toBe('x:path\n');
    });

    it('kills the command at its deadline: timedOut, no exit code, an error unless reject: false', async () => {
      const started = performance.now();
      const r = await runCommand(['sleep', '5'], { timeoutMs: 100, reject: false });
      expect(r).toMatchObject({ timedOut: true, exitCode: undefined });
      expect(performance.now() - started).toBeLessThan(2000);
      await expect(runCommand(['sleep', '5'], { timeoutMs: 100 })).rejects.toThrow(/timed out after 100 ms/);
    });

    it('an abort ends the command and throws ABORTED, also when aborted before the start', async () => {
      const controller = new AbortController();
      const run = runCommand(['sleep', '5'], { signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      await expect(run).rejects.toMatchObject({ code: 'ABORTED' });
      await expect(runCommand(['sleep', '5'], { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(HarnessError);
    });

    it("many commands can share one signal (the run's): all end on abort, no MaxListeners warning", async () => {
      const warnings: string[] = [];
      const onWarning = (w: Error) => warnings.push(w.name);
      process.on('warning', onWarning);
      const controller = new AbortController();
      const runs = Array.from({ length: 15 }, () =>
        runCommand(['sleep', '5'], { signal: controller.signal }).catch((e: unknown) => e),
      );
      setTimeout(() => controller.abort(), 100);
      expect((await Promise.all(runs)).every((e) => e instanceof HarnessError && e.code === 'ABORTED')).toBe(true);
      await new Promise((r) => setImmediate(r));
      process.off('warning', onWarning);
      expect(warnings).toEqual([]);
    });

    it('stopWhen ends the command without an error, whatever its exit', async () => {
      const controller = new AbortController();
      const run = runCommand(['sh', '-c', 'echo started; exec sleep 5'], { stopWhen: controller.signal });
      setTimeout(() => controller.abort(), 100);
      expect(await run).toMatchObject({ stopped: true, stdout: 'started\n', exitCode: undefined });
    });

    // a path, not a bare name: test/unit/lab-requirements.test.ts asks for a package for every program name
    it('a program that does not exist is a CommandFailedError without exit code', async () => {
      const error = await runCommand(['/nonexistent/netrepro-no-such-program', 'x'], { reject: false }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(CommandFailedError);
      expect(error).toMatchObject({ exitCode: undefined });
      expect((error as Error).message).toMatch(/exit signal\).*ENOENT/s);
    });
  });

  describe('spawnCommand', () => {
    it('readiness is a printed line (stdout or stderr); stop() signals and returns every line', async () => {
      const p = spawnCommand(['sh', '-c', 'echo starting; echo "ready 1" >&2; exec sleep 5']);
      const seen: string[] = [];
      p.onLine((l) => seen.push(l));
      expect(await p.waitFor(/^ready /, 2000)).toBe('ready 1');
      expect(p.pid).toBeGreaterThan(0);
      const r = await p.stop();
      expect(r.exitCode).toBeUndefined();
      expect(r.stdout.split('\n').sort()).toEqual(['ready 1', 'starting']);
      expect(p.lines()).toHaveLength(2);
    });

    it('waitFor rejects when the process exits first, or when the line does not come in time', async () => {
      const gone = spawnCommand(['sh', '-c', 'echo nope; exit 4']);
      await expect(gone.waitFor(/^ready/, 2000)).rejects.toThrow(/exit 4.*exited before it was ready/s);
      const slow = spawnCommand(['sleep', '5']);
      await expect(slow.waitFor(/^ready/, 100)).rejects.toThrow(/not ready after 100 ms/);
      await slow.stop('SIGKILL');
    });

    it('a program that does not exist: no pid, waitFor rejects, stop() returns', async () => {
      const p = spawnCommand(['/nonexistent/netrepro-no-such-program']);
      await expect(p.waitFor(/x/, 2000)).rejects.toThrow(/exited before it was ready/);
      expect(p.pid).toBeUndefined();
      expect((await p.stop()).exitCode).toBeUndefined();
    });

    it('with stdin: true it takes requests on its stdin while it runs', async () => {
      const p = spawnCommand(
        ['sh', '-c', 'read first; echo "answer $first"; read second; echo "answer $second"; read last'],
        { stdin: true },
      );
      p.write('1\n');
      expect(await p.waitFor(/^answer 1$/, 2000)).toBe('answer 1');
      p.write('2\n');
      expect(await p.waitFor(/^answer 2$/, 2000)).toBe('answer 2');
      await p.stop();
    });

    it('an abort signal ends the process', async () => {
      const controller = new AbortController();
      const p = spawnCommand(['sleep', '5'], { signal: controller.signal });
      controller.abort();
      await expect(p.waitFor(/x/, 2000)).rejects.toThrow(/exited before it was ready/);
    });
  });

  describe('in a namespace', () => {
    // this process's own network namespace: entering it is harmless, and the argv shown is nsenter's
    const net = `/proc/${process.pid}/ns/net`;

    it('runs the command there and reports the pasteable nsenter argv', async () => {
      const r = await runCommand(['sh', '-c', 'echo in'], { enter: { net } });
      expect(r).toMatchObject({
        exitCode: 0,
        stdout: 'in\n',
        argv: ['nsenter', `--net=${net}`, '--', 'sh', '-c', 'echo in'],
      });
    });

    it("a namespace that cannot be entered, or a program that is not there: nsenter's message and exit code", async () => {
      expect(await runCommand(['true'], { enter: { net: '/nonexistent/ns' }, reject: false })).toMatchObject({
        exitCode: 1,
        stderr: 'nsenter: cannot open /nonexistent/ns: No such file or directory\n',
      });
      expect(
        await runCommand(['/nonexistent/netrepro-no-such-program'], { enter: { net }, reject: false }),
      ).toMatchObject({
        exitCode: 127,
        stderr: expect.stringMatching(
          /^nsenter: failed to execute \/nonexistent\/netrepro-no-such-program: No such file or directory\n$/,
        ),
      });
    });
  });

  it('passes every argument as given: 5000 of them, and empty ones', async () => {
    const args = Array.from({ length: 5000 }, (_, i) => (i % 1000 === 0 ? '' : `a${i}`));
    const r = await runCommand(['sh', '-c', 'echo "$#:$1:$2:${5000}"', 'sh', ...args]);
    expect(r.stdout).toBe('5000::a1:a4999\n');
  });

  it('moves more than a pipe holds both ways (input 300 kB, output 1 MB)', async () => {
    expect((await runCommand(['wc', '-c'], { input: 'x'.repeat(300_000) })).stdout.trim()).toBe('300000');
    expect((await runCommand(['head', '-c', '1000000', '/dev/zero'])).stdout).toHaveLength(1_000_000);
  });
});
