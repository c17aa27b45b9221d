// Colour is decided per stream: `netrepro run | tee log` keeps colour on the terminal's stderr and
// none in the piped stdout. Conventions as Node documents them: FORCE_COLOR 1/2/3/true/'' forces
// colour (and wins over NO_COLOR), any other FORCE_COLOR value (0, false) turns it off; a non-empty
// NO_COLOR turns it off (no-color.org); otherwise colour on a terminal that is not TERM=dumb.
import { createColors } from 'picocolors';

export type Colors = ReturnType<typeof createColors>;

export function colorEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return ['', '1', '2', '3', 'true'].includes(force);
  if (env.NO_COLOR) return false;
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

export function colorsFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Colors {
  return createColors(colorEnabled(stream, env));
}

/** No colour at all, whatever the environment says: for text kept in files and records. */
export const PLAIN: Colors = createColors(false);
