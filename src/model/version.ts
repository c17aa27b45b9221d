// netrepro's own version, from package.json (one read, no import of the JSON as a module).
import { readFileSync } from 'node:fs';
import { packagePath } from './package-root.ts';

export const VERSION = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
