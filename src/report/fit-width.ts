// Lines fitted to a terminal's width: wrapped at word boundaries (a token longer than the width is cut), each
// continuation indented under its line's own text, so a narrow terminal never splits a line mid-word.
import wrapAnsi from 'wrap-ansi';

/** How far a continuation sits right of its line's own indent. */
const HANG = 4;
/** Narrower than this, wrapping helps no one: lines are left as they are. */
const MIN_COLUMNS = 30;

/** `text` (one or more lines) wrapped to `columns`; unchanged where the width is unknown. */
export function fitWidth(text: string, columns: number | undefined): string {
  if (!columns || columns < MIN_COLUMNS) return text;
  return text
    .split('\n')
    .map((line) => {
      const indent = /^ */.exec(line)![0];
      const hang = ' '.repeat(Math.min(indent.length + HANG, columns >> 1));
      // the continuation's width for every piece, the first included: no piece ends past the last column
      const pieces = wrapAnsi(line.slice(indent.length), columns - hang.length, { hard: true }).split('\n');
      return [indent + pieces[0], ...pieces.slice(1).map((p) => hang + p)].join('\n');
    })
    .join('\n');
}

/** `line` cut at a word boundary to fit `columns`, ending in `…` where it was cut; unchanged where the width is unknown. */
export function truncateLine(line: string, columns: number | undefined): string {
  if (!columns || columns < MIN_COLUMNS) return line;
  const pieces = wrapAnsi(line, columns - 1, { hard: true, trim: false }).split('\n');
  return pieces.length === 1 ? line : `${pieces[0]!.trimEnd()}…`;
}
