// `netrepro explain ID`: run one scenario and print the diagnosis with the evidence behind it. Without
// --report-dir the evidence goes to a temporary directory, removed once the explanation is printed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isInterruption } from '../exit-codes.ts';
import { explain } from '../../report/explain.ts';
import { STDOUT } from '../../report/write-report.ts';
import run from './run.ts';

export interface ExplainOptions {
  provider: string;
  profile?: string;
  reportDir?: string;
  html?: string;
}

export default async function explainCommand(id: string, options: ExplainOptions): Promise<number> {
  const temporary = options.reportDir === undefined;
  const reportDir = options.reportDir ?? (await mkdtemp(join(tmpdir(), 'netrepro-explain-')));
  try {
    const json = join(reportDir, 'report.json');
    const code = await run([id], {
      provider: options.provider,
      profile: options.profile,
      reportDir,
      json,
      html: options.html,
      parallel: 1,
    });
    if (isInterruption(code)) return code; // Ctrl-C: the run's own line said what happened
    // the HTML report on stdout keeps stdout to itself
    (options.html === STDOUT ? process.stderr : process.stdout).write(
      await explain(json, { evidenceKept: !temporary }),
    );
    return code;
  } finally {
    if (temporary) await rm(reportDir, { recursive: true, force: true });
  }
}
