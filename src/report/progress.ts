// Progress on stderr: a spinner under the printed lines where a terminal can draw one, plain lines
// anywhere else. ora divides by the terminal's width to know how many lines to clear, so a terminal
// that reports 0 columns (a pseudo-terminal without a size, e.g. `script -c` under a job runner) makes
// it clear Infinity lines in a busy loop; unknown or 0 width, CI and TERM=dumb get plain lines, and a
// terminal resized to 0 columns drops the spinner before ora draws again.
import ora, { type Ora } from 'ora';

export interface Progress {
  /** Prints a line above the spinner (or just the line). */
  print(line: string): void;
  /** What the spinner says now; nothing without one. */
  status(text: string): void;
  stop(): void;
}

export function canSpin(stream: { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv = process.env): boolean {
  // CI set at all, even empty, as ora itself reads it
  return Boolean(stream.isTTY) && (stream.columns ?? 0) > 0 && env.CI === undefined && env.TERM !== 'dumb';
}

export function progress(stream: NodeJS.WriteStream, options: { spinner: boolean }): Progress {
  // discardStdin off: ora's discarder puts the terminal in raw mode (no Ctrl-C from the terminal) and
  // never resumes stdin, so the ^C it means to forward is never read: Ctrl-C would do nothing
  let spinner: Ora | undefined = options.spinner && canSpin(stream) ? ora({ stream, discardStdin: false }) : undefined;
  const drop = () => {
    spinner?.stop();
    spinner = undefined;
    stream.off('resize', onResize);
  };
  const onResize = () => {
    if (!canSpin(stream)) drop();
  };
  if (spinner) stream.on('resize', onResize);
  return {
    print(line) {
      spinner?.clear();
      stream.write(`${line}\n`);
      spinner?.render();
    },
    status(text) {
      if (!spinner) return;
      if (spinner.isSpinning) spinner.text = text;
      else spinner.start(text);
    },
    stop: drop,
  };
}
