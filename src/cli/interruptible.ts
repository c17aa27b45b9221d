// Ctrl-C / SIGTERM abort the run; teardown still runs, then we exit 130 / 143. The handlers stay
// installed for the whole run: with `once`, Node restores the default action and the process can
// die mid-teardown. A third signal exits at once (then `netrepro clean` removes what is left).
// A reader that went away (`netrepro run ... | head`) is handled like SIGPIPE, teardown first: exit 141.
import { colorsFor } from '../report/colors.ts';

export function interruptible(): { signal: AbortSignal; exitCode: () => number | undefined } {
  const controller = new AbortController();
  const c = colorsFor(process.stderr);
  let code: number | undefined;
  let count = 0;
  const on = (sig: NodeJS.Signals, exit: number) =>
    process.on(sig, () => {
      count += 1;
      code ??= exit;
      if (count === 1) process.stderr.write(c.yellow(`\n${sig}: tearing down the lab, then exiting ${exit}\n`));
      else if (count === 2) process.stderr.write(c.yellow(`${sig}: still tearing down; once more to exit now and leave leftovers for \`netrepro clean\`\n`));
      else process.exit(exit);
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
  return { signal: controller.signal, exitCode: () => code };
}
