// --json FILE: the machine-readable report (contract in shared/DESIGN.md; version 1).
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Reporter } from './reporter.ts';

export function jsonReporter(file: string): Reporter {
  return {
    async onRunEnd(result) {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, JSON.stringify(result, null, 2) + '\n');
    },
  };
}
