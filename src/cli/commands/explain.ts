// `netrepro explain ID`: run one scenario and print the diagnosis with the evidence behind it.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { explain } from '../../report/explain.ts';
import run from './run.ts';

export default async function explainCommand(id: string, options: { provider: string; reportDir?: string; html?: string }): Promise<number> {
  const reportDir = options.reportDir ?? (await mkdtemp(join(tmpdir(), 'netrepro-explain-')));
  const json = join(reportDir, 'report.json');
  const code = await run([id], { provider: options.provider, reportDir, json, html: options.html, parallel: 1 });
  process.stdout.write(await explain(json));
  return code;
}
