// Certificates and credentials of a `local` cluster, made with openssl per run: a CA, the API server's
// serving certificate (its fabric address, the `kubernetes` Service IP and names), a service-account key
// pair, and one static bearer token every component and the harness use (authorization is AlwaysAllow:
// a throwaway lab, reachable only from the run's own namespaces and a socket file).
import { randomBytes } from 'node:crypto';
import { settleAll } from '../../../contract/settle-all.ts';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../../../contract/command.ts';

export interface LocalPki {
  dir: string;
  ca: string;
  apiserverCert: string;
  apiserverKey: string;
  saKey: string;
  saPub: string;
  tokenFile: string;
  token: string;
}

export async function makePki(dir: string, apiserverIPs: readonly string[]): Promise<LocalPki> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const p = (f: string) => join(dir, f);
  const openssl = (...args: string[]) => runCommand(['openssl', ...args]);
  const ecKey = (file: string) => openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file);
  await settleAll([ecKey(p('ca.key')), ecKey(p('apiserver.key')), ecKey(p('sa.key'))]);
  await openssl(
    'req',
    '-x509',
    '-new',
    '-key',
    p('ca.key'),
    '-subj',
    '/CN=netrepro-local-ca',
    '-days',
    '7',
    '-out',
    p('ca.crt'),
  );
  const san = [
    'DNS:kubernetes',
    'DNS:kubernetes.default',
    'DNS:kubernetes.default.svc',
    'DNS:localhost',
    ...apiserverIPs.map((ip) => `IP:${ip}`),
  ].join(',');
  await writeFile(p('apiserver.ext'), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
  await openssl('req', '-new', '-key', p('apiserver.key'), '-subj', '/CN=kube-apiserver', '-out', p('apiserver.csr'));
  await openssl(
    'x509',
    '-req',
    '-in',
    p('apiserver.csr'),
    '-CA',
    p('ca.crt'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-days',
    '7',
    '-extfile',
    p('apiserver.ext'),
    '-out',
    p('apiserver.crt'),
  );
  await openssl('ec', '-in', p('sa.key'), '-pubout', '-out', p('sa.pub'));
  const token = randomBytes(16).toString('hex');
  await writeFile(p('tokens.csv'), `${token},netrepro,netrepro,system:masters\n`, { mode: 0o600 });
  return {
    dir,
    ca: p('ca.crt'),
    apiserverCert: p('apiserver.crt'),
    apiserverKey: p('apiserver.key'),
    saKey: p('sa.key'),
    saPub: p('sa.pub'),
    tokenFile: p('tokens.csv'),
    token,
  };
}

/** A kubeconfig for the components (in the run's namespaces) and the harness (through the socket). */
export function kubeconfigYaml(server: string, ca: string, token: string, context: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${context}`,
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority: ${ca}`,
    'users:',
    '- name: netrepro',
    '  user:',
    `    token: ${token}`,
    'contexts:',
    `- name: ${context}`,
    '  context:',
    `    cluster: ${context}`,
    '    user: netrepro',
    `current-context: ${context}`,
    '',
  ].join('\n');
}
