// Reports that travel: the HTML pages of a run and of explain, with their folders moved elsewhere (as a CI
// artifact is downloaded), still resolve every link they hold, and carry the write-ups inline.
import { readFile, rename } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';
import { runProcess } from '../child-process.ts';
import { labSkipReason, tempDir } from '../lab-support.ts';

const cli = (args: string[]) =>
  runProcess('node', [join(PACKAGE_ROOT, 'bin/netrepro.js'), ...args], { cwd: PACKAGE_ROOT });

/** The page's links that are not web addresses or anchors, each as the file it points to. */
async function localLinks(page: string): Promise<string[]> {
  const html = await readFile(page, 'utf8');
  return [...html.matchAll(/href="([^"]+)"/g)]
    .map((m) => m[1]!.replaceAll('&amp;', '&'))
    .filter((h) => !/^(https?:|#)/.test(h))
    .map((h) => resolve(dirname(page), decodeURIComponent(h)));
}

describe.skipIf(labSkipReason)('HTML reports moved elsewhere', () => {
  it('run: report.html in --report-dir and a --html page elsewhere keep every link after their folders move', async () => {
    const dir = await tempDir();
    const r = await cli([
      'run',
      'service-no-endpoints-reject',
      'e2e-hairpin-to-self',
      '--report-dir',
      join(dir, 'reports'),
      '--html',
      join(dir, 'page', 'run.html'),
      '--quiet',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    await rename(join(dir, 'reports'), join(dir, 'downloaded-reports'));
    await rename(join(dir, 'page'), join(dir, 'downloaded-page'));
    for (const page of [join(dir, 'downloaded-reports', 'report.html'), join(dir, 'downloaded-page', 'run.html')]) {
      const links = await localLinks(page);
      expect(links.length, page).toBeGreaterThanOrEqual(4); // faulted and fixed of each scenario
      expect(links.filter((l) => !existsSync(l))).toEqual([]);
      const html = await readFile(page, 'utf8');
      expect(html).not.toContain('file://');
      // the write-up travels inside the page
      expect(html).toMatch(
        /<details class="incident"><summary>write-up \(docs\/incidents\/service-no-endpoints-reject\.md\)/,
      );
    }
  });

  it('explain --html keeps what it links to once its temporary evidence is gone', async () => {
    const dir = await tempDir();
    const page = join(dir, 'explain.html');
    const r = await cli(['explain', 'service-no-endpoints-reject', '--html', page]);
    expect(r.exitCode, r.stderr).toBe(0);
    await rename(dir, `${dir}-moved`);
    const links = await localLinks(join(`${dir}-moved`, 'explain.html'));
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((l) => !existsSync(l))).toEqual([]);
    await rename(`${dir}-moved`, dir); // for the temporary directory's own clean-up
  });
});
