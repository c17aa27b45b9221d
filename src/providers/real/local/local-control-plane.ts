// The argv of a `local` cluster's control plane: etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler, all in the run's fabric namespace, the API server at the nodes' gateway address.
import { join } from 'node:path';
import type { LocalBuild } from './local-build.ts';
import type { LocalPki } from './local-pki.ts';

/** What the control plane's argv are made of. */
export interface ControlPlaneInput {
  build: LocalBuild;
  pki: LocalPki;
  /** The run's state directory (etcd's data, the controller manager's flex-volume directory). */
  state: string;
  kubeconfig: string;
  /** The address the API server binds and advertises. */
  apiserverIP: string;
  serviceCIDR: string;
  /** The scenario's pod network. */
  clusterCIDR: string;
}

/** etcd on the fabric namespace's loopback only. */
export function etcdArgv(state: string): string[] {
  return [
    'etcd',
    '--name',
    'netrepro',
    '--data-dir',
    join(state, 'etcd'),
    '--listen-client-urls',
    'http://127.0.0.1:2379',
    '--advertise-client-urls',
    'http://127.0.0.1:2379',
    '--listen-peer-urls',
    'http://127.0.0.1:2380',
    '--initial-advertise-peer-urls',
    'http://127.0.0.1:2380',
    '--initial-cluster',
    'netrepro=http://127.0.0.1:2380',
  ];
}

export function apiserverArgv({ build, pki, apiserverIP, serviceCIDR }: ControlPlaneInput): string[] {
  return [
    build.bin('kube-apiserver'),
    '--etcd-servers=http://127.0.0.1:2379',
    `--bind-address=${apiserverIP}`,
    `--advertise-address=${apiserverIP}`,
    '--secure-port=6443',
    '--insecure-port=0',
    `--service-cluster-ip-range=${serviceCIDR}`,
    `--tls-cert-file=${pki.apiserverCert}`,
    `--tls-private-key-file=${pki.apiserverKey}`,
    `--client-ca-file=${pki.ca}`,
    `--token-auth-file=${pki.tokenFile}`,
    '--authorization-mode=AlwaysAllow',
    `--service-account-key-file=${pki.saPub}`,
    `--service-account-signing-key-file=${pki.saKey}`,
    '--service-account-issuer=https://kubernetes.default.svc',
    // pods need no API credentials: no service-account tokens to mint and mount
    '--disable-admission-plugins=ServiceAccount',
    '--allow-privileged=true',
    '--kubelet-preferred-address-types=InternalIP',
    '--profiling=false',
    '--enable-priority-and-fairness=false',
    '--logtostderr=true',
    '--v=0',
  ];
}

export function controllerManagerArgv(c: ControlPlaneInput): string[] {
  return [
    c.build.bin('kube-controller-manager'),
    `--kubeconfig=${c.kubeconfig}`,
    '--leader-elect=false',
    '--allocate-node-cidrs=false',
    `--cluster-cidr=${c.clusterCIDR}`,
    `--service-cluster-ip-range=${c.serviceCIDR}`,
    `--service-account-private-key-file=${c.pki.saKey}`,
    `--root-ca-file=${c.pki.ca}`,
    `--flex-volume-plugin-dir=${join(c.state, 'flex-volume')}`,
    '--port=0',
    '--secure-port=0',
    '--controllers=*,-serviceaccount-token',
    '--logtostderr=true',
    '--v=0',
  ];
}

export function schedulerArgv({ build, kubeconfig }: ControlPlaneInput): string[] {
  return [
    build.bin('kube-scheduler'),
    `--kubeconfig=${kubeconfig}`,
    '--leader-elect=false',
    '--port=0',
    '--secure-port=0',
    '--logtostderr=true',
    '--v=0',
  ];
}
