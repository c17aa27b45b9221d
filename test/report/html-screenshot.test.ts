// The HTML report rendered by a real browser: Debian's chromium, headless. The page for the Cilium race
// (a recorded probe trace) must show the sequence diagram with the culprit drawn in red, not an empty page.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/engine/run/results.ts';
import { renderHtml } from '../../src/report/html-reporter.ts';
import { attachDiagnoses } from '../../src/engine/run/probe-trace-hooks.ts';
import { tempDir } from '../lab-support.ts';
import { decodePng } from '../png-pixels.ts';

// Debian's package (preflight --for=test installs it); its binary is /usr/bin/chromium
const skip = existsSync('/usr/bin/chromium') ? undefined : 'no chromium (apt-get install -y chromium)';
if (skip) console.warn(`HTML screenshot test skipped: ${skip}`);

function ciliumRaceRun(): RunResult {
  const fixture = JSON.parse(
    readFileSync(
      new URL('../unit/fixtures/probe-traces/cilium-kube-proxy-forward-race--external.json', import.meta.url),
      'utf8',
    ),
  );
  const phase = {
    name: 'faulted' as const,
    variant: 'restart-cilium',
    steps: [],
    probes: [fixture.probe],
    checks: fixture.checks,
    durationMs: 0,
    status: 'passed' as const,
  };
  attachDiagnoses(phase, () => '');
  const scenario = {
    id: 'cilium-kube-proxy-forward-race',
    title: 'kube-proxy started after Cilium',
    file: '',
    verdict: 'passed' as const,
    durationMs: 0,
    phases: [phase],
    labs: [],
    log: [],
  };
  return {
    version: 1,
    provider: 'netns',
    durationMs: 0,
    summary: { passed: 1, measured: 0, failed: 0, errored: 0, skipped: 0 },
    scenarios: [scenario],
  };
}

describe.skipIf(skip)('HTML report in headless Chromium', () => {
  it('shows the packet path with the culprit marked', async () => {
    const dir = await tempDir();
    const html = renderHtml(ciliumRaceRun());
    expect(html).toContain('◀ CULPRIT');
    writeFileSync(join(dir, 'report.html'), html);
    const shot = join(dir, 'shot.png');
    const r = spawnSync(
      'chromium',
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        `--user-data-dir=${join(dir, 'profile')}`,
        '--window-size=1300,1100',
        `--screenshot=${shot}`,
        `file://${join(dir, 'report.html')}`,
      ],
      { timeout: 60_000 },
    );
    expect(r.status, String(r.stderr)).toBe(0);
    const image = decodePng(readFileSync(shot));
    expect(image.width).toBe(1300);
    // count the culprit's red (#b3261e) and the lanes' boxes' blue (#1a73e8): both drawn, in quantity
    let red = 0;
    let blue = 0;
    for (let y = 0; y < image.height; y += 2) {
      for (let x = 0; x < image.width; x += 2) {
        const [r_, g, b] = image.pixel(x, y);
        if (Math.abs(r_ - 0xb3) < 24 && Math.abs(g - 0x26) < 24 && Math.abs(b - 0x1e) < 24) red++;
        if (Math.abs(r_ - 0x1a) < 24 && Math.abs(g - 0x73) < 24 && Math.abs(b - 0xe8) < 24) blue++;
      }
    }
    expect(red).toBeGreaterThan(200);
    expect(blue).toBeGreaterThan(100);
  });
});
