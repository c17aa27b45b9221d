// The client of the native spawner (src/providers/netns/agent/spawner.c): one small process that forks and
// execs every command for us, entering a lab namespace itself when asked, so that this process never
// forks. Node forks its whole address space per child and blocks its event loop until the child has
// exec'd: with ~1,700 commands per suite run that was about half the run's main-thread time.
// Each command looks like a ChildProcess to a command runner (launch.ts: the events and fields it uses).
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { constants } from 'node:os';
import { Readable, Writable } from 'node:stream';
import type { ChildLike, LaunchOptions } from './launch.ts';

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]));
const ERRNO_NAMES = new Map(Object.entries(constants.errno).map(([name, n]) => [n, name]));

class RemoteChild extends EventEmitter implements ChildLike {
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  readonly stdout = new Readable({ read() {} });
  readonly stderr = new Readable({ read() {} });
  readonly stdin: Writable | null;
  private open = 3; // stdout, stderr, the process

  constructor(
    private readonly spawner: NativeSpawner,
    readonly id: number,
    private readonly file: string,
    withStdin: boolean,
  ) {
    super();
    // nothing is lost: command.ts attaches its readers in this same tick, data comes in later ones
    for (const s of [this.stdout, this.stderr]) s.once('end', () => this.closed()).resume();
    this.stdin = withStdin
      ? new Writable({
          write: (chunk: Buffer, _encoding, done) => (spawner.send('I', id, chunk), done()),
          final: (done) => (spawner.send('I', id, Buffer.alloc(0)), done()),
        })
      : null;
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.exitCode !== null || this.signalCode !== null) return false;
    this.spawner.send('K', this.id, Buffer.from([constants.signals[signal]]));
    return true;
  }

  started(pid: number): void {
    this.pid = pid;
  }

  failed(errno: number): void {
    this.pid = undefined;
    const code = ERRNO_NAMES.get(errno) ?? String(errno);
    const error = Object.assign(new Error(`spawn ${this.file} ${code}`), {
      code,
      errno: -errno,
      syscall: `spawn ${this.file}`,
    });
    this.emit('error', error);
    this.stdout.push(null);
    this.stderr.push(null);
    this.closed();
  }

  output(stream: number, data: Buffer | null): void {
    (stream === 1 ? this.stdout : this.stderr).push(data);
  }

  exited(code: number, signal: number): void {
    this.exitCode = signal ? null : code;
    this.signalCode = signal ? (SIGNAL_NAMES.get(signal) ?? 'SIGKILL') : null;
    this.emit('exit', this.exitCode, this.signalCode);
    this.closed();
  }

  /** 'close' once the process ended and both streams were read to their end, as a ChildProcess does. */
  private closed(): void {
    if (--this.open === 0) {
      this.spawner.forget(this.id);
      this.emit('close', this.exitCode, this.signalCode);
    }
  }
}

export class NativeSpawner {
  private readonly process: ChildProcess;
  private readonly children = new Map<number, RemoteChild>();
  private nextId = 1;
  private pending: Buffer = Buffer.alloc(0);
  private readonly outbox: Buffer[] = [];
  /** Set when the spawner died: the caller goes back to node:child_process. */
  private lost: string | undefined;
  /** Its end was asked for (close): no `onLost` for it. */
  private closing = false;

  /** `onLost`: the spawner is gone (with the signal that ended it, if one did); commands go back to node:child_process. */
  constructor(binary: string, onLost: (why: string, signal?: NodeJS.Signals) => void) {
    this.process = spawn(binary, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.process.stdout!.on('data', (chunk: Buffer) => this.receive(chunk));
    this.process.stdin!.on('error', () => {});
    this.process.on('error', (e) => this.die(`the spawner did not start: ${e.message}`, onLost));
    this.process.on('exit', (code, signal) =>
      this.die(`the spawner ended (${signal ?? `exit ${code}`})`, onLost, signal ?? undefined),
    );
    this.idle();
  }

  spawn(argv: readonly string[], options: LaunchOptions): ChildLike {
    const id = this.nextId++;
    const child = new RemoteChild(this, id, argv[0] ?? '', options.stdin);
    if (this.lost || this.closing) {
      queueMicrotask(() => child.failed(constants.errno.ECHILD));
      return child;
    }
    if (this.children.size === 0) this.busy();
    this.children.set(id, child);
    const env = Object.entries(options.env ?? {}).map(([k, v]) => `${k}=${v}`);
    const strings = [
      options.enter?.net ?? '',
      options.enter?.mount ?? '',
      options.enter?.cgroup ?? '',
      String(env.length),
      ...env,
      ...argv,
    ];
    this.send('S', id, Buffer.concat([Buffer.from([options.stdin ? 1 : 0]), Buffer.from(`${strings.join('\0')}\0`)]));
    return child;
  }

  /** Ends it (EOF on its stdin: it SIGTERMs whatever still runs and exits) and waits for the exit. */
  async close(): Promise<void> {
    if (this.lost) return;
    this.closing = true;
    this.busy(); // the exit is still to come: this process waits for it
    const exited = new Promise((resolve) => this.process.once('exit', resolve));
    this.process.stdin!.end(Buffer.concat(this.outbox.splice(0)));
    await exited;
  }

  /** Frames go out together at the end of the current task: commands started side by side wake the spawner once. */
  send(type: 'S' | 'I' | 'K', id: number, payload: Buffer): void {
    const head = Buffer.alloc(9);
    head.writeUInt32LE(5 + payload.length, 0);
    head.write(type, 4, 'latin1');
    head.writeUInt32LE(id, 5);
    if (this.outbox.push(head, payload) === 2)
      queueMicrotask(() => this.process.stdin!.write(Buffer.concat(this.outbox.splice(0))));
  }

  forget(id: number): void {
    this.children.delete(id);
    if (this.children.size === 0) this.idle();
  }

  /** The spawner keeps this process alive only while a command runs. */
  private busy(): void {
    this.process.ref();
    (this.process.stdout as unknown as { ref(): void }).ref();
  }

  private idle(): void {
    this.process.unref();
    (this.process.stdout as unknown as { unref(): void }).unref();
    (this.process.stdin as unknown as { unref(): void }).unref();
  }

  private receive(chunk: Buffer): void {
    let buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    let at = 0;
    while (buf.length - at >= 9) {
      const len = buf.readUInt32LE(at);
      if (buf.length - at < 4 + len) break;
      const type = String.fromCharCode(buf[at + 4]!);
      const child = this.children.get(buf.readUInt32LE(at + 5));
      const body = buf.subarray(at + 9, at + 4 + len);
      at += 4 + len;
      if (!child) continue;
      if (type === 'P') child.started(body.readInt32LE(0));
      else if (type === 'F') child.failed(body.readInt32LE(0));
      else if (type === 'O') child.output(body[0]!, body.length > 1 ? Buffer.from(body.subarray(1)) : null);
      else if (type === 'X') child.exited(body.readInt32LE(0), body.readInt32LE(4));
    }
    buf = buf.subarray(at);
    this.pending = buf.length ? Buffer.from(buf) : Buffer.alloc(0);
  }

  private die(why: string, onLost: (why: string, signal?: NodeJS.Signals) => void, signal?: NodeJS.Signals): void {
    if (this.lost) return;
    this.lost = why;
    if (!this.closing) onLost(why, signal);
    // whatever was running through it is gone with it: end each as killed
    for (const child of [...this.children.values()]) {
      if (child.pid === undefined) child.failed(constants.errno.ECHILD);
      else {
        child.output(1, null);
        child.output(2, null);
        child.exited(-1, constants.signals.SIGKILL);
      }
    }
  }
}
