// Whether the kube-proxy a cluster runs can stand for the release a scenario names. The incidents depend on
// KUBE-FORWARD's INVALID DROP and on the jump a 1.14 start-up deletes, so those must agree: a release of the
// same INVALID DROP layout stands for another. A newer release also stands for an older one of another
// layout where what differs cannot show: the scenario has no Service (what newer releases changed besides is
// how Services are translated: internalTrafficPolicy, terminating endpoints, UDP conntrack clean-up) and
// both write the same INVALID DROP with the node's be_liberal as it is when kube-proxy starts (a 1.29+
// release reads nf_conntrack_tcp_be_liberal once, at start-up, and leaves the DROP out when it is 1).
import { kubeProxyLayout, OLDEST_MINOR, type KubeProxyLayout } from '../../../dataplane/kube-proxy-layout.ts';

/** `v1.35.1` or `v1.35.1+k3s1` to its minor, 35; undefined for anything else. */
export function releaseMinor(k8sVersion: string): number | undefined {
  const minor = Number(/^v1\.(\d+)\./.exec(k8sVersion)?.[1]);
  return Number.isInteger(minor) ? minor : undefined;
}

/** Whether kube-proxy of this layout writes the INVALID DROP when it starts with be_liberal as given. */
const writesInvalidDrop = (layout: KubeProxyLayout, beLiberal: boolean) =>
  layout.invalidDrop === 'always' || (layout.invalidDrop === 'unless-be-liberal' && !beLiberal);

export interface StandInContext {
  /** nf_conntrack_tcp_be_liberal is 1 on the node when kube-proxy starts. */
  beLiberal: boolean;
  /** The scenario has Services. */
  services: boolean;
}

/**
 * Why the cluster's kube-proxy (`k8sVersion`) cannot stand for release `asked`, or undefined when it can.
 */
export function standInRefusal(asked: string, k8sVersion: string, context: StandInContext): string | undefined {
  const minor = releaseMinor(k8sVersion);
  if (minor === undefined || minor < OLDEST_MINOR)
    return `the cluster's Kubernetes ${k8sVersion} is older than the oldest kube-proxy layout netrepro derives`;
  const want = kubeProxyLayout(asked);
  const have = kubeProxyLayout(`1.${minor}`);
  if (want.invalidDrop === have.invalidDrop) return undefined;
  const why = `kube-proxy ${asked} and the cluster's ${k8sVersion} write KUBE-FORWARD's INVALID DROP differently (${want.invalidDrop} and ${have.invalidDrop})`;
  if (have.minor < want.minor) return why;
  if (context.services) return `${why}, and the scenario's Services would be translated as ${k8sVersion} does`;
  const liberal = `nf_conntrack_tcp_be_liberal=${context.beLiberal ? 1 : 0}`;
  if (writesInvalidDrop(want, context.beLiberal) !== writesInvalidDrop(have, context.beLiberal))
    return `${why}: with ${liberal} as it starts, ${
      writesInvalidDrop(want, context.beLiberal)
        ? `${asked} writes the DROP and ${k8sVersion} does not`
        : `${asked} leaves the DROP out and ${k8sVersion} writes it`
    }`;
  if (want.ipvsCleanupAtStart !== have.ipvsCleanupAtStart)
    return `${why}, and ${asked} ${want.ipvsCleanupAtStart ? 'deletes' : 'keeps'} the shared "kubernetes forwarding rules" jump at start-up, ${k8sVersion} ${have.ipvsCleanupAtStart ? 'deletes' : 'keeps'} it`;
  return undefined;
}
