// Placeholders resolve per cluster: addresses, namespaces, the Service range, lab names.
import { describe, expect, it } from 'vitest';
import { placeholderResolver, substitute } from '../../src/model/placeholders.ts';

const cluster = (serviceCIDR?: string) => ({
  address: (ref: string) => ({ 'svc/web': '10.96.0.20' })[ref] ?? 'none',
  namespace: (name: string) => `nr-abc123-${name}`,
  path: (ref: string) => `path of ${ref}`,
  serviceCIDR,
});

describe('placeholderResolver', () => {
  it("resolves {cidr/services} to the cluster's Service range, kubeadm's where it says none", () => {
    const argv = ['ip', 'route', 'add', '{cidr/services}', 'via', '{svc/web}', '{ns/default}', '{veth/web}'];
    expect(substitute(argv, placeholderResolver(cluster()))).toEqual([
      'ip',
      'route',
      'add',
      '10.96.0.0/12',
      'via',
      '10.96.0.20',
      'nr-abc123-default',
      'path of veth/web',
    ]);
    expect(substitute(['{cidr/services}'], placeholderResolver(cluster('10.43.0.0/16')))).toEqual(['10.43.0.0/16']);
  });
});
