// The names a scenario defines, and the issues found while checking what its sections name.
import type { Scenario } from './scenario-schema.ts';

export interface ReferenceIssue {
  path: (string | number)[];
  message: string;
  received?: string;
  expected?: string;
}

/** The kinds a `kind/name` reference can name in a scenario's own topology. */
export type NamedKind = 'node' | 'pod' | 'svc' | 'lb' | 'host';

/** One check of a scenario's references: what the scenario defines, and every issue found, in the order found. */
export class ReferenceCheck {
  /** The issues found so far, in the order the checks ran. */
  readonly issues: ReferenceIssue[] = [];
  /** The names the topology defines, per kind. */
  readonly names: Record<NamedKind, Set<string>>;
  /** Every probe's id. */
  readonly probeIds: Set<string>;
  /** The ids of probes with `repeat`: only those can be judged by count, rate, otherwise or sameBackend. */
  readonly repeatedProbes: Set<string>;
  /** The namespaces the topology's Services and pods live in: what `{ns/NAME}` can name. */
  readonly namespaces: Set<string>;

  constructor(readonly scenario: Scenario) {
    const t = scenario.topology;
    this.names = {
      node: new Set(t.nodes.map((n) => n.name)),
      pod: new Set(t.pods.map((p) => p.name)),
      svc: new Set(t.services.map((v) => v.name)),
      // a LoadBalancer Service's address: lb/NAME
      lb: new Set(t.services.filter((v) => v.loadBalancerIP).map((v) => v.name)),
      host: new Set(t.hosts.map((h) => h.name)),
    };
    this.probeIds = new Set(scenario.probes.map((p) => p.id));
    this.repeatedProbes = new Set(scenario.probes.filter((p) => p.repeat !== undefined).map((p) => p.id));
    // a pod backing no Service lives where all the Services are when they share one namespace, else in default
    const shared = new Set(t.services.map((v) => v.namespace));
    this.namespaces = shared.size === 1 ? shared : new Set([...shared, 'default']);
  }

  add(...issues: ReferenceIssue[]): void {
    this.issues.push(...issues);
  }

  /** The names of one kind, for an issue's `expected`. */
  known(kind: NamedKind): string {
    return [...this.names[kind]].join(', ') || 'none';
  }

  /** Records an issue unless `ref` (`kind/name`, or `fabric`) names something the topology defines. */
  checkRef(ref: string, path: (string | number)[]): void {
    if (ref === 'fabric') return; // the lab's node network: always there
    const [kind, name] = ref.split('/') as [NamedKind, string];
    if (!this.names[kind].has(name))
      this.issues.push({
        path,
        message:
          kind === 'lb' ? 'unknown LoadBalancer Service (lb/NAME names one with a loadBalancerIP)' : `unknown ${kind}`,
        received: name,
        expected: `one of: ${this.known(kind)}`,
      });
  }
}

/** An issue for every value that repeats an earlier one, at `path`, index, `field`. */
export function duplicateIssues(values: string[], path: (string | number)[], field: string): ReferenceIssue[] {
  const issues: ReferenceIssue[] = [];
  const seen = new Set<string>();
  values.forEach((v, i) => {
    if (seen.has(v))
      issues.push({
        path: [...path, i, field],
        message: `duplicate ${field}`,
        received: v,
        expected: 'a unique value',
      });
    seen.add(v);
  });
  return issues;
}
