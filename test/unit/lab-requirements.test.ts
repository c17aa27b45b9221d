// A fresh machine must have every program the code and the tests start: each one is listed in
// src/providers/netns/lab-requirements.json (with its Debian package, which preflight installs) or is a
// documented exception there (real-cluster tools, the Node runtime). Adding a spawn of a new tool
// without listing it fails here, naming the file and line.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scanScenarioCommands, scanSpawns, shellScriptCommands } from '../spawned-commands.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const requirements = JSON.parse(
  readFileSync(new URL('../../src/providers/netns/lab-requirements.json', import.meta.url), 'utf8'),
) as Record<string, Record<string, string> | string>;
const SECTIONS = ['commands', 'testCommands', 'realClusterCommands', 'runtime'] as const;
const listed = (section: (typeof SECTIONS)[number]) =>
  Object.keys((requirements[section] ?? {}) as Record<string, string>);

describe('lab-requirements.json covers every program started', () => {
  const code = scanSpawns(ROOT);
  const scenarios = scanScenarioCommands(ROOT);
  const all = [...code.spawns, ...scenarios];

  it('finds the spawns it is meant to find (the scan is not vacuous)', () => {
    const found = new Set(all.map((s) => s.command));
    // one per way of spawning: runCommand literal, Target.exec literal, a named argv constant, a local
    // wrapper, a prefix in a pass-through target, an `sh -c` script, a cross-file field, preflight, a scenario cmd
    for (const c of [
      'ip',
      'curl',
      'tcpdump',
      'iptables-save',
      'nsenter',
      'mount',
      'node',
      'unshare',
      'apt-get',
      'nft',
      'iptables',
    ])
      expect(found).toContain(c);
    expect(scenarios.length).toBeGreaterThan(5);
    expect(code.spawns.length).toBeGreaterThan(50);
  });

  it('can tell the program of every process-runner call', () => {
    // a call whose argv is neither a literal nor a name defined in the same file: write it so the
    // program can be read, or list the file in PASS_THROUGH (test/spawned-commands.ts) with the reason
    expect(code.unresolved).toEqual([]);
  });

  it('every program is listed with its package or as a documented exception', () => {
    const known = new Set(SECTIONS.flatMap(listed));
    const missing = all.filter((s) => !known.has(s.command)).map((s) => `${s.command} (${s.where})`);
    expect(missing, 'add these to src/providers/netns/lab-requirements.json with their Debian package').toEqual([]);
  });

  it('every listed program is still started somewhere (the list does not rot)', () => {
    const found = new Set(all.map((s) => s.command));
    const stale = SECTIONS.flatMap(listed).filter((c) => !found.has(c));
    expect(stale).toEqual([]);
  });

  it('names a Debian package for every program preflight installs', () => {
    for (const section of ['commands', 'testCommands'] as const) {
      for (const [command, pkg] of Object.entries(requirements[section] as Record<string, string>))
        expect(pkg, command).toMatch(/^[a-z0-9][a-z0-9+.-]+$/);
    }
  });
});

describe('shell scripts inside argv', () => {
  it('yields the first word of each command, builtins and exec left out', () => {
    expect(
      shellScriptCommands('mount -t bpf x /sys/fs/bpf && mkdir -p /a && echo ready && exec sleep infinity'),
    ).toEqual(['mount', 'mkdir', 'sleep']);
    expect(shellScriptCommands('echo $$ > "$0/cgroup.procs" && exec "$@"')).toEqual([]);
    expect(shellScriptCommands('A=1 tc qdisc show | grep x; true')).toEqual(['tc', 'grep']);
  });
});

describe('the scan sees a new tool however it is started', () => {
  it('finds each form in a scratch tree, and reports a call whose program it cannot read', () => {
    const root = mkdtempSync(join(tmpdir(), 'netrepro-scan-'));
    try {
      mkdirSync(join(root, 'scenarios'));
      mkdirSync(join(root, 'src'));
      writeFileSync(
        join(root, 'scenarios', 'x.yaml'),
        'fault:\n  steps:\n    - run: { on: node/a, cmd: "jq -r .x" }\n    - run: { on: node/a, cmd: "{bin/helper} --x" }\n',
      );
      writeFileSync(
        join(root, 'src', 'a.ts'),
        [
          "import { execFileSync } from 'node:child_process';",
          "await runCommand(['ethtool', '-k', 'eth0']);",
          "await target.exec(['ss', '-tn']);",
          "const SOCAT = ['socat', '-', 'TCP:x:1'];",
          'node.spawn(SOCAT);',
          'const probe = (argv: string[]) => runCommand(argv, { reject: false });',
          "await probe(['ping', '-c', '1', 'x']);",
          "node.spawn(['unshare', '--net', 'sh', '-c', `nc -l 80 && exec strace -f x`]);",
          "execFileSync('lsof', ['-i']);",
          "const re = /'(x)'/; re.exec(text); // a regex with quotes, and RegExp#exec: neither is a spawn",
          'await runCommand(pick());',
        ].join('\n'),
      );
      const scan = scanSpawns(root);
      const found = new Set([...scan.spawns, ...scanScenarioCommands(root)].map((s) => s.command));
      expect([...found].sort()).toEqual(
        ['ethtool', 'jq', 'lsof', 'nc', 'ping', 'sh', 'socat', 'ss', 'strace', 'unshare'].sort(),
      );
      expect(scan.unresolved).toEqual([expect.stringMatching(/^src\/a\.ts:11 runCommand\(pick/)]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
