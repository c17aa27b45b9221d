// Ending the process at once, even while a report write is stuck in the kernel (a hung mount, a FIFO
// nobody reads): process.exit() waits for libuv's thread pool, and such a write never returns. The
// exit listeners run first (they stop helpers a lab shared), then the signal's default action ends the
// process, so its parent sees it killed by that signal (130 / 143 in a shell), as Ctrl-C promises.

export function exitNow(signal: NodeJS.Signals, code: number): void {
  process.exitCode = code;
  process.emit('exit', code);
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
}
