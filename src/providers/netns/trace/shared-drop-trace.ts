// One drop-trace loader (agent/drop-trace.c) per harness process, shared by every lab: loading the BPF
// program and reading the kernel's BTF cost ~0.2 s of CPU, once per process instead of once per lab.
// Its filter map holds the namespace inodes of the labs that watch: a lab adds its own when its tracer
// starts and deletes them at its teardown (one `bpftool batch` each), and each drop line goes to the lab
// that owns its namespace (each lab updates the filter through its own command runner). The loader ends a moment after the last lab stops watching (a next lab in
// the same slot reuses it), at process exit, and with the process however it dies (PR_SET_PDEATHSIG).
// A flush is a request on the loader's stdin: its answer follows every drop queued before it.
import type { CommandRunner, SpawnedWithInput } from '../../../contract/command.ts';
import { spawnCommand } from '../../../contract/command.ts';
import { bpfObject } from '../bpf-build.ts';
import { dropFilterLine } from '../bpf-maps.ts';
import { helperBinary } from '../../namespaces/helper-build.ts';

/** How long the loader outlives the last lab watching: the next lab of a run usually starts within it. */
const IDLE_MS = 1500;

type Listener = (line: string) => void;

/** A lab's part of the loader: its drops go to its listener until `stop`. */
export interface DropWatch {
  /** Resolves true once every drop the kernel queued before the call has gone to the listener; false after `timeoutMs`. */
  flush(timeoutMs: number): Promise<boolean>;
  stop(): Promise<void>;
}

class SharedDropTrace {
  private readonly routes = new Map<number, Listener>();
  private idle: NodeJS.Timeout | undefined;
  private requests = 0;
  private readonly answers = new Map<number, () => void>();
  alive = true;

  private constructor(
    private readonly loader: SpawnedWithInput,
    private readonly mapId: number,
    private readonly onExit: () => void,
  ) {
    loader.onLine((line) => {
      const inum = Number(/^drop ns=(\d+)/.exec(line)?.[1]);
      if (inum) this.routes.get(inum)?.(line);
      else this.answers.get(Number(/^flushed (\d+)$/.exec(line)?.[1]))?.();
    });
  }

  /** `binaries`: our compiled helper and the BPF object it loads (built once per source version). */
  static async start(binaries: Promise<[string, string]>): Promise<SharedDropTrace> {
    const loader = spawnCommand(await binaries, { stdin: true });
    const kill = () => {
      try {
        if (loader.pid) process.kill(loader.pid, 'SIGTERM');
      } catch (e) {
        // ended already: the Ctrl-C that ends this process reached the loader too (same process group)
        if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
      }
    };
    process.once('exit', kill);
    try {
      const ready = await loader.waitFor(/^ready map=\d+$/, 10_000);
      return new SharedDropTrace(loader, Number(ready.split('=')[1]), kill);
    } catch (e) {
      process.removeListener('exit', kill);
      await loader.stop('SIGKILL');
      throw e;
    }
  }

  /** Routes drops in `inums` to `listener` once the filter holds them; its `stop` undoes both. */
  async watch(inums: readonly number[], commands: CommandRunner, listener: Listener): Promise<DropWatch> {
    clearTimeout(this.idle);
    for (const inum of inums) this.routes.set(inum, listener);
    const unroute = () => {
      for (const inum of inums) if (this.routes.get(inum) === listener) this.routes.delete(inum);
      if (this.routes.size === 0) this.idle = setTimeout(() => void this.stop(), IDLE_MS);
    };
    // a filter that did not take: no route left behind, so the loader can still end when idle
    await this.filter('update', inums, commands).catch((e: unknown) => (unroute(), Promise.reject(e)));
    return {
      flush: (timeoutMs) => this.flush(timeoutMs),
      stop: async () => {
        unroute();
        await this.filter('delete', inums, commands).catch(() => {}); // the loader may be gone already (Ctrl-C)
      },
    };
  }

  private flush(timeoutMs: number): Promise<boolean> {
    const request = ++this.requests;
    return new Promise((resolve) => {
      const done = (flushed: boolean) => {
        clearTimeout(timer);
        this.answers.delete(request);
        resolve(flushed);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.answers.set(request, () => done(true));
      this.loader.write(`flush ${request}\n`);
    });
  }

  private async filter(op: 'update' | 'delete', inums: readonly number[], commands: CommandRunner): Promise<void> {
    await commands.exec(['bpftool', 'batch', 'file', '-'], {
      input: inums.map((inum) => dropFilterLine(op, this.mapId, inum)).join(''),
    });
  }

  private async stop(): Promise<void> {
    if (this.routes.size > 0 || !this.alive) return;
    this.alive = false;
    if (current?.value === this) current = undefined;
    process.removeListener('exit', this.onExit);
    await this.loader.stop('SIGTERM');
  }
}

type Current = { promise: Promise<SharedDropTrace>; value?: SharedDropTrace };
let current: Current | undefined;

/** The process's loader, started on first use (again after it ended idle). */
function loader(): Promise<SharedDropTrace> {
  if (!current) {
    const entry: Current = {
      promise: SharedDropTrace.start(Promise.all([helperBinary('drop-trace'), bpfObject('drop-trace')])),
    };
    entry.promise.then(
      (v: SharedDropTrace) => (entry.value = v),
      () => current === entry && (current = undefined), // a failed start is not remembered
    );
    current = entry;
  }
  return current.promise;
}

/** Drop lines of the namespaces `inums` go to `listener` from when this resolves, until its `stop`; `commands`: the lab's. */
export async function watchDrops(
  inums: readonly number[],
  commands: CommandRunner,
  listener: Listener,
): Promise<DropWatch> {
  let shared = await loader();
  if (!shared.alive) shared = await loader(); // it ended idle just now: a new one
  return shared.watch(inums, commands, listener);
}
