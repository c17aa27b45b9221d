// Files the code reads at run time (scenarios/, profiles/, src/providers/netns/bpf/*.c, the pod agent,
// lab-requirements.json) live in the package, not next to the module: the compiled code runs from
// dist/<layer>/..., the sources from src/<layer>/..., and both must find the same files.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's root directory (where package.json is): two folders above this module's, from src/ or dist/. */
export const PACKAGE_ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

/** An absolute path inside the package: packagePath('scenarios'), packagePath('src/providers/netns/bpf/x.c'). */
export const packagePath = (...parts: string[]): string => join(PACKAGE_ROOT, ...parts);
