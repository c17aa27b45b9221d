// A Docker engine of the cluster's own, for hosts without Docker (docs/kind-build.md): Debian's dockerd from the
// kind build, in a network namespace `<prefix>docker` and a mount namespace of its own, its data, exec root,
// socket and pid file in the cluster's state directory, its cgroups under `/<prefix>docker`. Nothing of it is
// in the host's namespaces: the host's routes, iptables chains, ip_forward and mounts stay as they were.
// Its published ports (kind's API server port) are on that namespace's loopback, so what talks to them runs
// with `enter` (nsenter into the namespace) or through a socket file forwarded there.
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../../../contract/command.ts';
import { RUN_PREFIX } from '../../../contract/run-id.ts';
import { packagePath } from '../../../model/package-root.ts';
import { killAll, namespacePids } from '../../namespaces/namespace-pids.ts';
import { rmdirWhenEmpty } from '../../namespaces/rmdir-when-empty.ts';
import { NETNS_DIR, STATE_ROOT } from '../../namespaces/lab-names.ts';
import { Daemon } from '../common/daemon.ts';
import type { DockerEngine } from './docker-engine.ts';

export interface PrivateDockerInput {
  /** `<prefix>docker`: the network namespace, the state directory's and the cgroup's name. */
  name: string;
  /** The run's work directory: only a `clean` of the same work directory reaps the engine. */
  workDir: string;
  /** Debian's docker.io unpacked (usr/bin/docker, usr/sbin/dockerd). */
  dockerRoot: string;
  /** A data root with the cluster's images loaded (the kind build's), which the engine starts from a copy of. */
  dataTemplate: string;
  signal?: AbortSignal;
  log(line: string): void;
}

export interface PrivateDocker extends DockerEngine {
  readonly stateDir: string;
  /** Its network namespace's path. */
  readonly netns: string;
  stop(): Promise<void>;
}

/** Capabilities the kernel knows that this process's bounding set lacks (Docker's --privileged asks for all of them). */
export async function missingCapabilities(): Promise<number[]> {
  const last = Number((await readFile('/proc/sys/kernel/cap_last_cap', 'utf8')).trim());
  const status = await readFile('/proc/self/status', 'utf8');
  const bounding = BigInt(`0x${/^CapBnd:\s*([0-9a-f]+)/m.exec(status)?.[1] ?? '0'}`);
  const missing: number[] = [];
  for (let cap = 0; cap <= last; cap++) if (((bounding >> BigInt(cap)) & 1n) === 0n) missing.push(cap);
  return missing;
}

export async function startPrivateDocker(input: PrivateDockerInput): Promise<PrivateDocker> {
  const { name, dockerRoot } = input;
  const stateDir = join(PRIVATE_DOCKER_ROOT, name);
  const dockerCli = join(dockerRoot, 'usr/bin/docker');
  // another engine's stop may remove the empty root between this mkdir's steps: once more then
  await mkdir(stateDir, { recursive: true }).catch(() => mkdir(stateDir, { recursive: true }));
  await writeFile(join(stateDir, WORK_DIR_FILE), input.workDir);
  // the netns lab's owner file: its `clean` leaves this live run's namespace alone, as it does a local cluster's
  const runId = RUN_PREFIX.exec(name)?.[1] ?? name;
  await mkdir(join(STATE_ROOT, runId), { recursive: true });
  await writeFile(join(STATE_ROOT, runId, 'owner.json'), `${JSON.stringify({ pid: process.pid, runId })}\n`);
  const engine: PrivateDocker = {
    stateDir,
    docker: [dockerCli, '-H', `unix://${join(stateDir, 'docker.sock')}`],
    env: {
      DOCKER_HOST: `unix://${join(stateDir, 'docker.sock')}`,
      PATH: `${join(dockerRoot, 'usr/bin')}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}`,
    },
    enter: ['nsenter', `--net=${join(NETNS_DIR, name)}`],
    netns: join(NETNS_DIR, name),
    stop: () => stopPrivateDocker(name, stateDir, dockerCli, daemon),
  };
  let daemon: Daemon | undefined;
  try {
    await copyDataRoot(input.dataTemplate, join(stateDir, 'data'));
    await runCommand(['ip', 'netns', 'add', name]);
    await runCommand(['ip', '-n', name, 'link', 'set', 'lo', 'up']);
    const missing = await missingCapabilities();
    const runtime = missing.length > 0 ? [packagePath('src/providers/real/containers/runc-bounding-set.sh')] : [];
    if (runtime.length > 0)
      input.log(
        `docker engine ${name}: the capability bounding set lacks ${missing.length}; runc runs behind runc-bounding-set.sh`,
      );
    daemon = new Daemon(
      'dockerd',
      [
        'unshare',
        '--mount',
        '--propagation',
        'slave',
        'nsenter',
        `--net=${join(NETNS_DIR, name)}`,
        packagePath('src/providers/real/containers/private-dockerd.sh'),
        stateDir,
        dockerRoot,
        ...runtime,
      ],
      join(stateDir, 'dockerd.log'),
    );
    await daemon.waitForLine(/API listen on /, 60_000, input.signal);
    return engine;
  } catch (e) {
    await stopPrivateDocker(name, stateDir, dockerCli, daemon).catch(() => {});
    throw e;
  }
}

/**
 * A copy of a data root whose image layers' files are hard links: no container writes them (overlayfs copies a
 * file up before changing it), while the databases and metadata beside them, which dockerd writes in place, are
 * copies of the engine's own.
 */
async function copyDataRoot(template: string, data: string): Promise<void> {
  await mkdir(join(data, 'overlay2'), { recursive: true });
  for (const entry of await readdir(template)) {
    if (entry !== 'overlay2') await runCommand(['cp', '-a', join(template, entry), join(data, entry)]);
  }
  for (const layer of await readdir(join(template, 'overlay2'))) {
    const from = join(template, 'overlay2', layer);
    const to = join(data, 'overlay2', layer);
    if (!existsSync(join(from, 'diff'))) {
      await runCommand(['cp', '-a', from, to]); // overlay2/l: the layers' short names
      continue;
    }
    await mkdir(to);
    for (const part of await readdir(from))
      await runCommand(['cp', part === 'diff' ? '-al' : '-a', join(from, part), join(to, part)]);
  }
}

/** The file in an engine's state directory that names its run's work directory. */
const WORK_DIR_FILE = 'work-dir';

/** Where engines keep their state: `<root>/<prefix>docker`. */
export const PRIVATE_DOCKER_ROOT = '/var/tmp/netrepro-kind';

/**
 * The engine's containers removed while it still answers, dockerd stopped, then every process left in its
 * network namespace or its cgroups killed (a crashed run's shims and node containers too), the namespace,
 * cgroups and state removed.
 */
export async function stopPrivateDocker(
  name: string,
  stateDir: string,
  dockerCli: string,
  daemon?: Daemon,
): Promise<void> {
  const docker = [dockerCli, '-H', `unix://${join(stateDir, 'docker.sock')}`];
  const listed = await runCommand([...docker, 'ps', '-aq'], { reject: false, timeoutMs: 10_000 }).catch(
    () => undefined,
  );
  const ids = listed?.exitCode === 0 ? listed.stdout.split('\n').filter(Boolean) : [];
  if (ids.length > 0) await runCommand([...docker, 'rm', '-f', ...ids], { reject: false, timeoutMs: 120_000 });
  await daemon?.stop('SIGTERM', 20_000);
  const netns = join(NETNS_DIR, name);
  for (let round = 0; round < 20; round++) {
    const pids = [...((await namespacePids([netns])).get(netns) ?? []), ...(await cgroupPids(name))];
    if (pids.length === 0) break;
    killAll(pids);
    await new Promise((r) => setTimeout(r, 100));
  }
  await runCommand(['ip', 'netns', 'delete', name], { reject: false });
  for (const sub of await cgroupSubsystems()) await rmCgroupTree(join('/sys/fs/cgroup', sub, name));
  await rm(stateDir, { recursive: true, force: true });
  await rmdir(PRIVATE_DOCKER_ROOT).catch(() => {}); // only when no other engine is there
  const runId = RUN_PREFIX.exec(name)?.[1];
  if (runId) await rm(join(STATE_ROOT, runId), { recursive: true, force: true });
  await rmdir(STATE_ROOT).catch(() => {}); // only when no other run is using it
}

/**
 * Engines of runs in `workDir` that `removable` says are over, found by their state directory (made first and
 * removed last, so an engine half started or half stopped has one). An engine of another work directory (another
 * user's runs, a test's) is never touched.
 */
export async function reapPrivateDockers(
  dockerCli: string,
  workDir: string,
  removable: (runId: string) => Promise<boolean>,
): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(PRIVATE_DOCKER_ROOT).catch(() => [])) {
    const runId = RUN_PREFIX.exec(name)?.[1];
    if (!runId || !name.endsWith('docker')) continue;
    const owner = await readFile(join(PRIVATE_DOCKER_ROOT, name, WORK_DIR_FILE), 'utf8').catch(() => undefined);
    if (owner !== workDir || !(await removable(runId))) continue;
    await stopPrivateDocker(name, join(PRIVATE_DOCKER_ROOT, name), dockerCli);
    removed.push(`docker engine ${name}`);
  }
  return removed;
}

const cgroupSubsystems = (): Promise<string[]> => readdir('/sys/fs/cgroup').catch(() => []);

/** Every process in the cgroup `name` of any subsystem, or below it. */
async function cgroupPids(name: string): Promise<number[]> {
  const pids = new Set<number>();
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => undefined);
    if (!entries) return;
    const procs = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
    for (const p of procs.split('\n').filter(Boolean)) pids.add(Number(p));
    for (const e of entries) if (e.isDirectory()) await walk(join(dir, e.name));
  };
  for (const sub of await cgroupSubsystems()) await walk(join('/sys/fs/cgroup', sub, name));
  return [...pids];
}

/** Children first: a cgroup directory goes only once it is empty. */
async function rmCgroupTree(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => undefined);
  if (!entries) return;
  for (const e of entries) if (e.isDirectory()) await rmCgroupTree(join(dir, e.name));
  await rmdirWhenEmpty(dir).catch(() => {});
}
