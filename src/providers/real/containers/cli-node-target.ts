// A node of a real cluster reached through a CLI: `docker exec <node container>` (kind, k3s) or
// `minikube ssh` (minikube). Only the argv prefix differs, so one class serves all three.
import { runCommand, spawnCommand, type ExecOptions, type SpawnOptions } from '../../../contract/command.ts';
import type { Target } from '../../../contract/provider.ts';
import { dirname } from 'node:path';
import { pasteable } from '../../../model/errors.ts';
import { HOST_DOCKER } from './docker-engine.ts';

export class CliNodeTarget implements Target {
  constructor(
    readonly ref: string,
    private readonly wrap: (argv: readonly string[]) => string[],
  ) {}

  exec(argv: readonly string[], options?: ExecOptions) {
    return runCommand(this.wrap(argv), options, this.ref);
  }

  spawn(argv: readonly string[], options?: SpawnOptions) {
    return spawnCommand(this.wrap(argv), options);
  }
}

/** Tools node images lack (kind and k3s ship no tcpdump; k3s no conntrack) run from the probe image. */
const FROM_PROBE_IMAGE: ReadonlySet<string> = new Set(['tcpdump', 'conntrack']);

/**
 * On k3s curl too (kube-proxy's metrics on the node's loopback): its image is k3s's own userland, which
 * netrepro does not rely on for curl.
 */
export const K3S_FROM_PROBE_IMAGE: ReadonlySet<string> = new Set([...FROM_PROBE_IMAGE, 'curl']);

/**
 * `docker exec -i <container> argv...`: argv reaches execve in the node unchanged. tcpdump and
 * conntrack (`fromProbeImage`) instead run in a throwaway probe-image container in the node's network
 * namespace, with the directory of a `-w FILE` mounted, so a capture lands on the host like in the netns lab.
 */
export function dockerNode(
  container: string,
  probeImage: string,
  runId: string,
  fromProbeImage: ReadonlySet<string> = FROM_PROBE_IMAGE,
  docker: readonly string[] = HOST_DOCKER.docker,
) {
  return (argv: readonly string[]): string[] => {
    if (!fromProbeImage.has(argv[0] ?? '')) return [...docker, 'exec', '-i', container, ...argv];
    const w = argv.indexOf('-w');
    const dir = w >= 0 && argv[w + 1] ? dirname(argv[w + 1]!) : undefined;
    return [
      ...docker,
      'run',
      '--rm',
      '-i',
      '--label',
      `netrepro.io/run=${runId}`,
      '--network',
      `container:${container}`,
      '--cap-add',
      'NET_ADMIN',
      '--cap-add',
      'NET_RAW',
      ...(dir ? ['-v', `${dir}:${dir}`] : []),
      // the tool is the entrypoint: an image may have one of its own (the project's pod image sleeps)
      '--entrypoint',
      argv[0]!,
      probeImage,
      ...argv.slice(1),
    ];
  };
}

/**
 * `minikube ssh` hands its words to a remote shell, so each word is quoted for it. With the docker
 * driver the node is also a container named like the node, so the probe-image tools work the same.
 */
export function minikubeNode(profile: string, node: string, probeImage: string, runId: string) {
  const viaDocker = dockerNode(node, probeImage, runId);
  return (argv: readonly string[]): string[] =>
    FROM_PROBE_IMAGE.has(argv[0] ?? '')
      ? viaDocker(argv)
      : ['minikube', 'ssh', '-p', profile, '--node', node, '--', 'sudo', ...argv.map((a) => pasteable([a]))];
}
