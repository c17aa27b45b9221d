#!/usr/bin/env node
// @ts-check
// Makes a fresh clone runnable: npm dependencies, then the Debian packages the netns lab uses,
// then a check that this kernel has what the lab needs. Plain Node, no dependencies: it runs before `npm ci`.
// Exit 3 with the fix when the lab cannot run here; with --for=test outside CI that is only a warning,
// because the unit tests still run (and the lab tests skip, saying why).
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { release } from 'node:os';

const root = new URL('..', import.meta.url).pathname;
const forTests = process.argv.includes('--for=test');
const say = (/** @type {string} */ line) => process.stderr.write(`preflight: ${line}\n`);
const requirements = JSON.parse(
  readFileSync(new URL('../src/providers/netns/lab-requirements.json', import.meta.url), 'utf8'),
);

if (!existsSync(`${root}/node_modules/.package-lock.json`)) {
  say('installing npm dependencies (npm ci)');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
} else if (!existsSync(`${root}/dist/cli/main.js`)) {
  // a checkout installed before the CLI was compiled (npm ci builds dist/ in prepare)
  say('building the CLI (npm run build)');
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
}

/** @param {string} message @param {string} fix */
function cannotRunLab(message, fix) {
  if (forTests && process.env.CI !== 'true') {
    say(`${message}; lab tests will be skipped (${fix})`);
    process.exit(0);
  }
  say(`${message}\n  fix: ${fix}`);
  process.exit(3);
}

if (process.platform !== 'linux')
  cannotRunLab('the netns lab needs Linux', 'run on Linux, or use a real-cluster provider');
const onPath = (/** @type {string} */ cmd) =>
  [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin'].some((dir) => {
    try {
      accessSync(`${dir}/${cmd}`, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
// the tests also start programs the lab itself does not need (nft for the host snapshot)
const commands = { ...requirements.commands, ...(forTests ? requirements.testCommands : {}) };
const missing = new Set([
  ...Object.entries(commands)
    .filter(([cmd]) => !onPath(cmd))
    .map(([, pkg]) => pkg),
  ...Object.entries(requirements.files)
    .filter(([file]) => !existsSync(file))
    .map(([, pkg]) => pkg),
]);
if (missing.size > 0) {
  if (process.getuid?.() !== 0)
    cannotRunLab(
      `missing packages: ${[...missing].join(' ')}, and not root to install them`,
      `as root: apt-get install -y ${[...missing].join(' ')}`,
    );
  if (!existsSync('/usr/bin/apt-get'))
    cannotRunLab(
      `missing packages: ${[...missing].join(' ')}; automatic install needs Debian/Ubuntu (apt-get)`,
      'install the equivalents with your package manager',
    );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  // a package another release names otherwise: Ubuntu before 24.10 ships bpftool only in the tools of its
  // running kernel (linux-tools-$(uname -r)); the first name the archive has a candidate for is installed
  const installable = (/** @type {string} */ pkg) =>
    /^\s*Candidate: (?!\(none\))/m.test(spawnSync('apt-cache', ['policy', pkg], { encoding: 'utf8' }).stdout ?? '');
  const chosen = [...missing].map((pkg) => {
    /** @type {string[]} */
    const other = requirements.alternatives[pkg] ?? [];
    const names = [pkg, ...other.map((a) => a.replace('$(uname -r)', release()))];
    const found = names.find(installable);
    if (!found)
      cannotRunLab(
        `no package in this system's archive ships what ${pkg} ships (tried ${names.join(', ')})`,
        `install it by hand, then run again`,
      );
    if (found !== pkg) say(`${pkg} is not in this archive: installing ${found} instead`);
    return found;
  });
  say(`installing packages: ${chosen.join(' ')}`);
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...chosen], { stdio: 'inherit', env });
}

if (process.getuid?.() !== 0) cannotRunLab('the netns lab needs root (it creates network namespaces)', 'run as root');
// kernel features, checked in a throwaway namespace so the host is never touched
const probe = (/** @type {string[]} */ argv) => spawnSync('unshare', ['--net', ...argv], { encoding: 'utf8' });
if (probe(['true']).status !== 0)
  cannotRunLab(
    'cannot create network namespaces here',
    'run on a kernel with CONFIG_NET_NS, as root, outside a restricted container',
  );
if (probe(['sysctl', '-n', 'net.bridge.bridge-nf-call-iptables']).status !== 0) {
  cannotRunLab(
    'no per-namespace net.bridge.bridge-nf-call-iptables (br_netfilter)',
    'modprobe br_netfilter (Linux >= 5.3)',
  );
}
if (
  probe(['iptables-restore', '--test', '/dev/null']).status !== 0 ||
  probe(['iptables', '-t', 'nat', '-S']).status !== 0
) {
  cannotRunLab('iptables nat does not work in a network namespace', 'load nf_tables/nf_nat (modprobe nf_nat)');
}
say('ok: npm dependencies, lab packages and kernel features present');
