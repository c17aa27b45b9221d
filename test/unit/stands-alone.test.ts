// A clone is all a reader has: every scenario's `incident:` and every relative link in the
// Markdown files resolves to a file in the repository.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from '../spawned-commands.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

describe('the repository stands alone', () => {
  it('every scenario names an incident write-up that exists in docs/incidents/', () => {
    const dir = join(ROOT, 'scenarios');
    for (const name of readdirSync(dir, { recursive: true })
      .map(String)
      .filter((n) => n.endsWith('.yaml'))) {
      const incident = (parse(readFileSync(join(dir, name), 'utf8')) as { incident?: string }).incident;
      expect(incident, name).toMatch(/^docs\/incidents\/[a-z0-9-]+\.md$/);
      expect(existsSync(join(ROOT, incident!)), `${name}: ${incident}`).toBe(true);
    }
  });

  it('every relative link in a Markdown file resolves', () => {
    const broken: string[] = [];
    for (const file of sourceFiles(ROOT).filter((f) => f.endsWith('.md') && !f.startsWith('node_modules/'))) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const m of text.matchAll(/\]\(([^)\s#]+)(#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
        if (!existsSync(join(ROOT, dirname(file), target))) broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
