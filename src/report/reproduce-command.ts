// The command that runs a scenario again the way this run did: the same provider, profile and environment
// knobs, through the entry point that works where the reader stands (the repository's own script, or npx
// where netrepro is installed as a package).
import { resolve } from 'node:path';
import { PACKAGE_ROOT } from '../model/package-root.ts';

/** How this run was started: the program to call and the environment settings that change what it runs. */
export interface Invocation {
  /** `node bin/netrepro.js` in the package's own checkout, `npx netrepro` elsewhere. */
  bin: string;
  /** NAME=value for each knob set, in a shell-safe form. */
  env: string[];
}

/** What names a scenario in a command: the package's own by id, any other by its file. */
export interface ScenarioRef {
  /** One of the package's own scenarios, which `run ID` finds wherever the package is installed. */
  shipped: boolean;
  /** Relative to the working directory, as CI tools link files. */
  file: string;
  /** The `--profile` the run applied (a name or a file), which a command that reproduces it repeats. */
  appliedProfile?: string;
}

/** The entry point a reader calls: the checkout's own script in the package's folder, npx anywhere else. */
export const defaultInvocation = (env: string[] = []): Invocation => ({
  bin: resolve(process.cwd()) === PACKAGE_ROOT ? 'node bin/netrepro.js' : 'npx netrepro',
  env,
});

const SAFE = /^[\w@%+=:,./-]*$/;
/** A word as a POSIX shell reads it back unchanged. */
export const shellWord = (s: string) => (SAFE.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);

export function reproduceCommand(
  id: string,
  provider: string,
  facts: ScenarioRef | undefined,
  invocation: Invocation,
): string {
  // a shipped scenario by its id (found in the package wherever it is installed), any other by its file
  const what = !facts || facts.shipped ? id : facts.file;
  return [
    ...invocation.env,
    invocation.bin,
    'run',
    shellWord(what),
    '--provider',
    shellWord(provider),
    ...(facts?.appliedProfile ? ['--profile', shellWord(facts.appliedProfile)] : []),
  ].join(' ');
}
