// Command-line conventions: colour per stream, did-you-mean, the environment knobs in --help,
// unreadable files, GitHub annotations, optional real-cluster libraries.
import { runProcess } from '../child-process.ts';
import { cliInProcess } from '../cli-in-process.ts';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { colorEnabled } from '../../src/report/colors.ts';
import { ENV_KNOBS, envHelp } from '../../src/cli/env-knobs.ts';
import { githubAnnotation } from '../../src/cli/commands/validate.ts';
import type { ScenarioValidationError } from '../../src/model/errors.ts';
import { selectScenarios } from '../../src/model/find-scenarios.ts';
import { loadScenarioFile, parseScenario } from '../../src/model/load-scenario.ts';
import { nearest } from '../../src/model/nearest.ts';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';
import { importOptional, requireInstalled } from '../../src/providers/real/common/optional-module.ts';
import { tempDir } from '../lab-support.ts';

const cli = (args: string[], env: Record<string, string> = {}) =>
  runProcess('node', ['bin/netrepro.js', ...args], { cwd: PACKAGE_ROOT, env });

describe('colour', () => {
  const tty = { isTTY: true };
  const pipe = { isTTY: false };
  it.each([
    [{}, tty, true],
    [{}, pipe, false],
    [{ NO_COLOR: '1' }, tty, false],
    [{ NO_COLOR: '' }, tty, true], // no-color.org: only a non-empty value counts
    [{ FORCE_COLOR: '0' }, tty, false],
    [{ FORCE_COLOR: 'false' }, tty, false],
    [{ FORCE_COLOR: '1' }, pipe, true],
    [{ FORCE_COLOR: '' }, pipe, true],
    [{ FORCE_COLOR: '3', NO_COLOR: '1' }, pipe, true], // Node: a valid FORCE_COLOR wins over NO_COLOR
    [{ TERM: 'dumb' }, tty, false],
  ])('env %o on %o: %s', (env, stream, expected) => {
    expect(colorEnabled(stream, env)).toBe(expected);
  });

  it('is decided per stream: piped stdout has none while FORCE_COLOR=0 keeps stderr plain too', async () => {
    const forced = await cli(['run', 'no-such-id'], { FORCE_COLOR: '1' });
    expect(forced.stderr).toContain('\x1b[31m');
    const off = await cli(['run', 'no-such-id'], { FORCE_COLOR: '0' });
    expect(off.stderr).not.toContain('\x1b[');
  });
});

describe('did you mean', () => {
  it('suggests near names only', () => {
    expect(nearest('probs', ['probes', 'topology', 'fixes'])).toBe('probes');
    expect(nearest('colour', ['name', 'podCIDR', 'sysctls'])).toBeUndefined();
    expect(nearest('conntrack-invalid-rest', ['conntrack-invalid-reset', 'conntrack-load-reset-rate'])).toBe(
      'conntrack-invalid-reset',
    );
  });

  it('for scenario ids', async () => {
    await expect(selectScenarios(['stale-sock-lb-progam'])).rejects.toThrow(
      'no scenario with id stale-sock-lb-progam (did you mean stale-sock-lb-program?)',
    );
  });

  it('for YAML keys', async () => {
    const seed = await readFile(join(PACKAGE_ROOT, 'scenarios/br-netfilter-clusterip-same-node.yaml'), 'utf8');
    const error = (() => {
      try {
        parseScenario(seed.replace(/^probes:/m, 'probs:'), 'bad.yaml');
      } catch (e) {
        return e as ScenarioValidationError;
      }
    })();
    expect(error?.message).toMatch(
      /bad\.yaml:\d+:1: probs: unknown key probs \(did you mean probes\?\) \(expected one of: .*probes/,
    );
  });
});

describe('unreadable scenario files', () => {
  it('names the path and the reason, with a hint that fits it (not :0:0)', async () => {
    const missing = loadScenarioFile('/nonexistent/x.yaml');
    await expect(missing).rejects.toThrow(/^\/nonexistent\/x\.yaml: cannot read: no such file$/);
    await expect(missing).rejects.toMatchObject({ hint: expect.stringContaining('netrepro list') });
    const dir = await tempDir();
    await expect(loadScenarioFile(dir)).rejects.toMatchObject({
      message: `${dir}: cannot read: a directory, not a scenario file`,
      hint: expect.stringContaining(`${dir}/*.yaml`),
    });
  });
});

describe('environment knobs', () => {
  it('--help lists every NETREPRO_* variable the code reads', async () => {
    const names = new Set<string>();
    for (const top of ['src']) {
      for (const file of await readdir(join(PACKAGE_ROOT, top), { recursive: true })) {
        if (file.endsWith('.ts'))
          for (const m of (await readFile(join(PACKAGE_ROOT, top, file), 'utf8')).matchAll(/NETREPRO_[A-Z0-9_]+/g))
            names.add(m[0]);
      }
    }
    const listed = ENV_KNOBS.map(([name]) => name);
    expect([...names].filter((n) => !listed.includes(n))).toEqual([]);
    expect(names.size).toBeGreaterThan(5);
    const help = await cliInProcess(['--help']);
    expect(help.stdout).toContain(envHelp().trim());
  });
});

describe('CLI conventions', () => {
  it('--version prints the package version', async () => {
    const { version } = JSON.parse(await readFile(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect((await cliInProcess(['--version'])).stdout.trim()).toBe(version);
  });

  it('list --json', async () => {
    const r = await cliInProcess(['list', '--json']);
    const rows = JSON.parse(r.stdout) as { id: string; file: string; cni: string }[];
    expect(rows.find((x) => x.id === 'br-netfilter-clusterip-same-node')).toMatchObject({
      file: 'scenarios/br-netfilter-clusterip-same-node.yaml',
      cni: 'bridge',
    });
  });

  it('validate under GitHub Actions prints ::error annotations with file, line and column', async () => {
    const dir = await tempDir();
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'id: x\ntitle: t\ntopology:\n  cni: calico\n');
    const r = await cli(['validate', bad], { GITHUB_ACTIONS: 'true' });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toContain(
      `::error file=${bad},line=4,col=8,title=netrepro%3A topology.cni::topology.cni: not an allowed value (received "calico", expected one of: bridge`,
    );
    expect((await cli(['validate', bad])).stdout).not.toContain('::error');
  });

  it('escapes annotation data and properties', () => {
    expect(githubAnnotation({ file: 'a,b:c.yaml', line: 0, column: 0, field: '', message: '50%\nnext' })).toBe(
      '::error file=a%2Cb%3Ac.yaml,title=netrepro%3A scenario::50%25%0Anext',
    );
  });
});

describe('optional real-cluster libraries', () => {
  it('an absent one is an environment problem (exit 3) with the install line', async () => {
    const absent = Object.assign(
      new Error("Cannot find package '@kubernetes/client-node' imported from /x/client-kube-api.js"),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
    await expect(importOptional('the kind provider', () => Promise.reject(absent))).rejects.toMatchObject({
      code: 'ENVIRONMENT',
      message: expect.stringContaining('the kind provider needs @kubernetes/client-node'),
      hint: 'npm install @kubernetes/client-node @testcontainers/k3s',
    });
    const other = Object.assign(new Error("Cannot find package 'left-pad'"), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(importOptional('x', () => Promise.reject(other))).rejects.toBe(other);
  });

  it('a provider checks its libraries resolve before it runs (installed here: no error)', () => {
    expect(() =>
      requireInstalled('the k3s provider', ['@kubernetes/client-node', '@testcontainers/k3s']),
    ).not.toThrow();
  });
});

describe('the scenario catalogue behind `list`', () => {
  it('reuses an entry only while the file is unchanged, and an invalid file still fails', async () => {
    const { scenarioCatalogue } = await import('../../src/model/scenario-catalogue.ts');
    const dir = await tempDir();
    const file = join(dir, 'one.yaml');
    const seed = await readFile(join(PACKAGE_ROOT, 'scenarios/br-netfilter-clusterip-same-node.yaml'), 'utf8');
    await writeFile(file, seed);
    const [first] = await scenarioCatalogue(dir);
    expect(first).toMatchObject({ id: 'br-netfilter-clusterip-same-node', file, cni: 'bridge' });
    expect(await scenarioCatalogue(dir)).toEqual([first]);
    await writeFile(file, seed.replace(/^title: .*$/m, 'title: changed'));
    expect((await scenarioCatalogue(dir))[0]?.title).toBe('changed');
    await writeFile(file, seed.replace(/^title: .*$/m, 'title: [broken'));
    await expect(scenarioCatalogue(dir)).rejects.toThrow(/one\.yaml:\d+:\d+: YAML/);
  });
});
