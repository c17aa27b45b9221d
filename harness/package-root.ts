// Files the code reads at run time (scenarios/, profiles/, clusters/netns/bpf/*.c, the pod agent,
// lab-requirements.json) live in the package, not next to the module: the compiled code runs from
// dist/harness/..., the sources from harness/..., and both must find the same files.
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const parent = dirname(dirname(fileURLToPath(import.meta.url)));
/** The package's root directory (where package.json is), from the sources or from dist/. */
export const PACKAGE_ROOT = basename(parent) === 'dist' ? dirname(parent) : parent;

/** An absolute path inside the package: packagePath('scenarios'), packagePath('clusters/netns/bpf/x.c'). */
export const packagePath = (...parts: string[]): string => join(PACKAGE_ROOT, ...parts);
