// One monitor of the lab trace (xtables-monitor --trace, conntrack -E): a process that receives netfilter
// events on one netlink socket and prints each as it comes (both flush stdout per event). Whether it has
// printed everything is read from the kernel's view of the process, never from a packet sent to be seen:
//  - subscribed: one of its own descriptors is a NETLINK_NETFILTER socket that joined the groups
//    (/proc/PID/net/netlink): from then on every event is queued to it;
//  - drained: that socket's receive queue is empty (Rmem) while the process sleeps in a receive on it,
//    waiting for a datagram (/proc/PID/syscall: the call and descriptor; wchan: the datagram wait), one
//    sleep throughout (voluntary context switches unchanged around the reads). A receive that waits has
//    taken nothing off the queue, so every event queued before was taken by an earlier receive, and the
//    process printed it before it received again;
//  - flushed: a line of ours written to its stdout pipe once it drained comes back after all it printed.
//    Where its stdout is a socket of this process (node:child_process, without the native spawner), what
//    it printed is already in that socket: a full turn of the event loop reads it.
import { appendFile, readdir, readFile, readlink } from 'node:fs/promises';
import type { CommandRunner, Spawned } from '../../../contract/command.ts';
import { helperBinary } from '../../namespaces/helper-build.ts';

const NETLINK_NETFILTER = 12;
/** recvfrom and recvmsg, the receives libmnl and libnfnetlink wait in, by architecture. */
const RECEIVES: Partial<Record<NodeJS.Architecture, readonly number[]>> = { x64: [45, 47], arm64: [207, 212] };
/** Where a datagram receive sleeps until one is queued (net/core/datagram.c). */
const WAITING = /^_*skb_wait_for_more_packets$/;
const FLUSH = 'netrepro-flush ';
/** Its socket's receive buffer once subscribed: room for a burst's events (a datagram's verdicts take ~38 KB). */
const RECEIVE_BUFFER = 16 << 20;

interface Socket {
  fd: number;
  inode: number;
}

export class NetlinkMonitor {
  private socket: Socket | undefined;
  private readonly flushes = new Map<string, () => void>();
  private flushed = 0;

  constructor(
    readonly process: Spawned,
    /** The Groups bits (/proc/net/netlink) its socket joins. */
    private readonly groups: number,
    /** The lab's command runner, for the helper that enlarges its receive buffer. */
    private readonly commands: CommandRunner,
  ) {
    process.onLine((line) => this.flushes.get(line)?.());
  }

  /** Called for every line the monitor prints (not our flush lines). */
  onLine(listener: (line: string) => void): void {
    this.process.onLine((line) => void (line.startsWith(FLUSH) || listener(line)));
  }

  /** Whether it joined its groups in the namespace `inum` (up to 1 s): then it receives every event from now on. */
  async subscribe(inum: number): Promise<boolean> {
    const pid = this.process.pid;
    if (!pid) return false;
    for (let i = 0; i < 200; i++) {
      const ns = await readlink(`/proc/${pid}/ns/net`).catch(() => undefined);
      if (ns === undefined) return false; // it ended
      if (ns === `net:[${inum}]`) this.socket = await joinedSocket(pid, this.groups);
      if (this.socket) {
        await enlargeBuffer(pid, this.socket.fd, this.commands);
        return true;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    return false;
  }

  /**
   * Resolves true once every event queued to it before the call has been printed and has reached our
   * line listeners; false at `until` (a performance.now() time), or when it is not subscribed or ended.
   * A monitor busy with a stream of events is looked at again every 5 ms.
   */
  async flush(until: number): Promise<boolean> {
    const pid = this.process.pid;
    if (!pid || !this.socket) return false;
    try {
      while (!(await drained(pid, this.socket))) {
        if (performance.now() >= until) return false;
        await new Promise((r) => setTimeout(r, 5));
      }
    } catch {
      return false; // it ended
    }
    const stdout = await readlink(`/proc/${pid}/fd/1`).catch(() => '');
    if (stdout.startsWith('socket:')) {
      // epoll reports it readable now: the poll phase of the next turn reads it, before a second immediate
      await new Promise((r) => setImmediate(() => setImmediate(r)));
      return true;
    }
    const line = `${FLUSH}${++this.flushed}`;
    return new Promise<boolean>((resolve) => {
      const done = (seen: boolean) => {
        clearTimeout(timer);
        this.flushes.delete(line);
        resolve(seen);
      };
      const timer = setTimeout(() => done(false), Math.max(0, until - performance.now()));
      this.flushes.set(line, () => done(true));
      // one write of one short line: atomic in the pipe, after every line the monitor wrote before
      appendFile(`/proc/${pid}/fd/1`, `${line}\n`).catch(() => done(false));
    });
  }
}

/** Its NETLINK_NETFILTER socket in one of `groups`, found among its descriptors. */
/** Best effort: without gcc (no helper) the monitor keeps its default buffer, and an overflow is named in the trace. */
async function enlargeBuffer(pid: number, fd: number, commands: CommandRunner): Promise<void> {
  const helper = await helperBinary('rcvbuf').catch(() => undefined);
  if (helper)
    await commands.exec([helper, String(pid), String(fd), String(RECEIVE_BUFFER)], { reject: false, timeoutMs: 5000 });
}

async function joinedSocket(pid: number, groups: number): Promise<Socket | undefined> {
  const joined = new Set(
    netlinkRows(await readFile(`/proc/${pid}/net/netlink`, 'utf8').catch(() => ''))
      .filter((r) => r.eth === NETLINK_NETFILTER && (r.groups & groups) !== 0)
      .map((r) => r.inode),
  );
  if (joined.size === 0) return undefined;
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) {
    const inode = Number(/^socket:\[(\d+)\]$/.exec(await readlink(`/proc/${pid}/fd/${fd}`).catch(() => ''))?.[1]);
    if (joined.has(inode)) return { fd: Number(fd), inode };
  }
  return undefined;
}

/** Whether `pid` has handled everything its socket received (see the top of this file); throws once it ended. */
async function drained(pid: number, socket: Socket): Promise<boolean> {
  const before = await sleeps(pid);
  if (before === undefined) return false;
  const [syscall, wchan, table] = await Promise.all([
    readFile(`/proc/${pid}/syscall`, 'utf8'),
    readFile(`/proc/${pid}/wchan`, 'utf8'),
    readFile(`/proc/${pid}/net/netlink`, 'utf8'),
  ]);
  const after = await sleeps(pid);
  const [nr, fd] = syscall.split(' ');
  const receiving =
    (RECEIVES[process.arch] ?? []).includes(Number(nr)) && Number(fd) === socket.fd && WAITING.test(wchan.trim());
  const queued = netlinkRows(table).find((r) => r.inode === socket.inode)?.rmem;
  return after === before && receiving && queued === 0;
}

/** Its voluntary context switches so far while it sleeps (state S); undefined while it runs. */
async function sleeps(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  if (!/^State:\s+S\b/m.test(status)) return undefined;
  return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1]);
}

/** /proc/PID/net/netlink: `sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode`, Groups in hex. */
function netlinkRows(table: string): { eth: number; groups: number; rmem: number; inode: number }[] {
  return table
    .split('\n')
    .slice(1)
    .map((row) => row.trim().split(/\s+/))
    .filter((cols) => cols.length >= 10)
    .map((cols) => ({
      eth: Number(cols[1]),
      groups: Number.parseInt(cols[3]!, 16),
      rmem: Number(cols[4]),
      inode: Number(cols[9]),
    }));
}
