// Ctrl-C / SIGTERM abort the run; teardown still runs, then we exit 130 / 143. The handlers stay
// installed for the whole run: with `once`, Node restores the default action and the process can
// die mid-teardown. While labs may be up a third signal exits at once (then `netrepro clean` removes
// what is left). Once the labs are down (`labsDown()`), only reports are left to write: a signal
// gives them REPORT_GRACE_MS to finish and a second one exits at once.
// A reader that went away (`netrepro run ... | head`) is handled like SIGPIPE, teardown first: exit 141.
import { colorsFor } from '../report/colors.ts';
import { exitNow } from './exit-now.ts';

/** How long a signal after teardown waits for reports still being written (a hung file system never finishes). */
export const REPORT_GRACE_MS = 2000;

export interface Interruptible {
  signal: AbortSignal;
  exitCode: () => number | undefined;
  /** The signal that interrupted the run (SIGPIPE for a reader that went away). */
  interruptedBy: () => string | undefined;
  /** The labs are torn down; from now on a signal ends the process within REPORT_GRACE_MS. */
  labsDown: () => void;
}

export function interruptible(): Interruptible {
  const controller = new AbortController();
  const c = colorsFor(process.stderr);
  let code: number | undefined;
  let received: NodeJS.Signals | undefined;
  let count = 0;
  let down = false;
  const graceThenExit = () => setTimeout(() => exitNow(received!, code!), REPORT_GRACE_MS).unref();
  const on = (sig: NodeJS.Signals, exit: number) =>
    process.on(sig, () => {
      count += 1;
      code ??= exit;
      received ??= sig;
      if (down) {
        if (count > 1) return exitNow(received, code);
        process.stderr.write(
          c.yellow(
            `\n${sig}: the labs are down; exiting ${code} once the reports are written (at most ${REPORT_GRACE_MS / 1000} s)\n`,
          ),
        );
        graceThenExit();
        return;
      }
      if (count === 1) process.stderr.write(c.yellow(`\n${sig}: tearing down the lab, then exiting ${exit}\n`));
      else if (count === 2)
        process.stderr.write(
          c.yellow(`${sig}: still tearing down; once more to exit now and leave leftovers for \`netrepro clean\`\n`),
        );
      else exitNow(received, code);
      controller.abort();
    });
  on('SIGINT', 130);
  on('SIGTERM', 143);
  // without a listener, EPIPE on a write is an uncaught error: the process dies and leaves its labs up
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_DESTROYED') throw e;
      code ??= 141;
      controller.abort();
    });
  }
  return {
    signal: controller.signal,
    exitCode: () => code,
    interruptedBy: () => received ?? (code === undefined ? undefined : 'SIGPIPE'),
    labsDown: () => {
      if (down) return;
      down = true;
      // interrupted during the run: the reports of what ran get the same grace
      if (received) graceThenExit();
    },
  };
}
