// Who wrote a report, where and when: the netrepro, Node and kernel versions a result depends on.
import { release } from 'node:os';
import { VERSION } from '../model/version.ts';
import type { ReportMetaData } from './report-schema.ts';

/** package.json's version (src/model/version.ts finds it from the sources and from dist/ alike). */
export const netreproVersion = (): string => VERSION;

export function reportMeta(startedAt: Date): ReportMetaData {
  return {
    netrepro: netreproVersion(),
    node: process.version,
    kernel: release(),
    platform: process.platform,
    arch: process.arch,
    startedAt: startedAt.toISOString(),
  };
}
