// Who wrote a report, where and when: the netrepro, Node and kernel versions a result depends on.
import { existsSync, readFileSync } from 'node:fs';
import { release } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReportMetaData } from './report-schema.ts';

let cached: string | undefined;

/** package.json's version, found upwards from this file (it moves when the code is compiled elsewhere). */
export function netreproVersion(): string {
  if (cached) return cached;
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'netrepro' && pkg.version) return (cached = pkg.version);
    }
    if (dirname(dir) === dir) return (cached = 'unknown');
  }
}

export function reportMeta(startedAt: Date): ReportMetaData {
  return { netrepro: netreproVersion(), node: process.version, kernel: release(), platform: process.platform, arch: process.arch, startedAt: startedAt.toISOString() };
}
