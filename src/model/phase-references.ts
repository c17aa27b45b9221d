// The reference checks of a scenario's phases: what each phase's expectations, steps and checks name.
import { namespacePlaceholders } from './placeholders.ts';
import { probeClient, probeKindOf } from './probes/registry.ts';
import { duplicateIssues, type ReferenceCheck } from './reference-check.ts';
import type { Scenario } from './scenario-schema.ts';
import { stepKindOf } from './steps/registry.ts';

/** The sections of a phase that name probes, pods, nodes or hosts. */
interface PhaseSections {
  /** Expected observations, by probe id. */
  expect: Record<string, unknown>;
  /** The steps the phase runs first. */
  steps: Scenario['fault']['steps'];
  /** The checks read around its probes. */
  checks: Scenario['fault']['checks'];
}

type Path = (string | number)[];

/** Checks the baseline, the fault and every fix, in that order. */
export function checkPhases(check: ReferenceCheck): void {
  const s = check.scenario;
  checkPhase(check, { expect: s.baseline.expect, steps: s.baseline.steps ?? [], checks: s.baseline.checks }, [
    'baseline',
  ]);
  checkPhase(check, s.fault, ['fault']);
  for (const [i, f] of s.fixes.entries()) checkPhase(check, f, ['fixes', i]);
  checkDeletedPods(check);
}

/**
 * A pod a `delete` step deleted runs nothing from then on: no later step of its phase or of a phase after it
 * names it (its address may still be a destination), no probe expected there is sent from it, no check runs in it.
 * A fix runs after the baseline and the fault, not after another fix.
 */
function checkDeletedPods(check: ReferenceCheck): void {
  const s = check.scenario;
  const phases: { path: Path; phase: PhaseSections }[] = [
    {
      path: ['baseline'],
      phase: { expect: s.baseline.expect, steps: s.baseline.steps ?? [], checks: s.baseline.checks },
    },
    { path: ['fault'], phase: s.fault },
  ];
  const runs = s.fixes.length > 0 ? s.fixes.map((f, i) => [...phases, { path: ['fixes', i], phase: f }]) : [phases];
  const reported = new Set<string>();
  const report = (path: Path, pod: string, what: string) => {
    const key = path.join('.');
    if (reported.has(key)) return;
    reported.add(key);
    check.add({
      path,
      message: `pod ${pod} is deleted by an earlier delete step: ${what}`,
      received: pod,
      expected: 'a pod that still exists at this point',
    });
  };
  for (const run of runs) {
    const deleted = new Set<string>();
    for (const { path, phase } of run) {
      const at = new Set(deleted);
      for (const [i, step] of phase.steps.entries()) {
        const [kind, spec] = stepKindOf(step);
        for (const r of kind.refs(spec))
          if (r.ref.startsWith('pod/') && at.has(r.ref.slice(4)))
            report([...path, 'steps', i, kind.key, ...r.path], r.ref.slice(4), 'no later step can name it');
        if ('delete' in step && step.delete) at.add(step.delete.pod);
      }
      for (const id of Object.keys(phase.expect)) {
        const from = s.probes.find((p) => p.id === id)?.from;
        const pod = from && probeClient(from).startsWith('pod/') ? probeClient(from).slice(4) : undefined;
        if (pod && at.has(pod)) report([...path, 'expect', id], pod, `probe ${id} cannot be sent from it`);
      }
      for (const [i, c] of phase.checks.entries())
        if (c.on.startsWith('pod/') && at.has(c.on.slice(4)))
          report([...path, 'checks', i, 'on'], c.on.slice(4), 'no check can run in it');
      for (const pod of at) deleted.add(pod);
    }
  }
}

function checkPhase(check: ReferenceCheck, phase: PhaseSections, base: Path): void {
  for (const id of Object.keys(phase.expect))
    checkExpectation(check, phase.expect[id], { id, path: [...base, 'expect', id] });
  for (const [i, step] of phase.steps.entries()) checkStep(check, step, [...base, 'steps', i]);
  checkNamespaces(check, phase.steps, [...base, 'steps']);
  checkNamespaces(check, phase.checks, [...base, 'checks']);
  for (const [i, c] of phase.checks.entries()) {
    check.checkRef(c.on, [...base, 'checks', i, 'on']);
    if (c.snat) checkSnatFlow(check, c.snat, [...base, 'checks', i, 'snat']);
  }
  check.add(
    ...duplicateIssues(
      phase.checks.map((c) => c.id),
      [...base, 'checks'],
      'id',
    ),
  );
}

/** Every `{ns/NAME}` in the strings of `value` (a command, a pattern) names a namespace of the topology. */
function checkNamespaces(check: ReferenceCheck, value: unknown, path: Path): void {
  if (typeof value === 'string') {
    for (const name of namespacePlaceholders(value))
      if (!check.namespaces.has(name))
        check.add({
          path,
          message: `unknown namespace in {ns/${name}}`,
          received: name,
          expected: `one of: ${[...check.namespaces].join(', ')}`,
        });
  } else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value))
      checkNamespaces(check, v, [...path, Array.isArray(value) ? Number(k) : k]);
}

/** An SNAT table is Cilium's (BPF masquerade), and the flow's ends exist; the client is a pod, whose flows are masqueraded. */
function checkSnatFlow(
  check: ReferenceCheck,
  flow: NonNullable<Scenario['fault']['checks'][number]['snat']>,
  path: Path,
) {
  const t = check.scenario.topology;
  if (t.cni !== 'cilium' || !t.cilium.bpfMasquerade)
    check.add({
      path,
      message: "a node's BPF SNAT table is Cilium's, filled by its BPF masquerade",
      received: t.cni === 'cilium' ? 'cilium.bpfMasquerade: false' : `cni: ${t.cni}`,
      expected: 'topology.cni: cilium with cilium.bpfMasquerade: true',
    });
  if (!flow.from.startsWith('pod/'))
    check.add({
      path: [...path, 'from'],
      message: 'the client of a masqueraded flow is a pod',
      received: flow.from,
      expected: 'pod/NAME',
    });
  check.checkRef(flow.from, [...path, 'from']);
  check.checkRef(flow.to, [...path, 'to']);
}

/** Where an expectation is written. */
interface ExpectationAt {
  /** The id of the probe it expects something of. */
  id: string;
  /** Its path: the phase's, then `expect`, then the id. */
  path: Path;
}

function checkExpectation(check: ReferenceCheck, e: unknown, at: ExpectationAt): void {
  checkExpectedProbe(check, e, at);
  if (!e || typeof e !== 'object') return;
  if ('source' in e && typeof e.source === 'string') check.checkRef(e.source, [...at.path, 'source']);
  checkExpectedAnswer(check, e, at);
  checkExpectedClientAddress(check, e, at);
  if ('sentTo' in e && typeof e.sentTo === 'string' && e.sentTo.includes('/'))
    check.checkRef(e.sentTo, [...at.path, 'sentTo']);
  checkExpectedServer(check, e, at);
}

/** The probe exists, and is repeated if the expectation judges a distribution. */
function checkExpectedProbe(check: ReferenceCheck, e: unknown, { id, path }: ExpectationAt): void {
  if (!check.probeIds.has(id))
    check.add({
      path: [...path],
      message: 'unknown probe',
      received: id,
      expected: `one of: ${[...check.probeIds].join(', ')}`,
    });
  if (
    e &&
    typeof e === 'object' &&
    ('count' in e || 'rate' in e || 'otherwise' in e || 'sameBackend' in e) &&
    !check.repeatedProbes.has(id)
  ) {
    check.add({
      path: [...path],
      message: 'count, rate, otherwise and sameBackend need a repeated probe',
      received: id,
      expected: 'repeat: N on the probe',
    });
  }
}

/** An expected DNS answer names something that exists, and its probe is a DNS probe. */
function checkExpectedAnswer(check: ReferenceCheck, e: object, { id, path }: ExpectationAt): void {
  if ('answer' in e && e.answer !== undefined)
    for (const [i, a] of (Array.isArray(e.answer) ? e.answer : [e.answer]).entries())
      if (a.includes('/')) check.checkRef(a, [...path, 'answer', ...(Array.isArray(e.answer) ? [i] : [])]);
  if ('answer' in e && e.answer !== undefined && !check.scenario.probes.find((p) => p.id === id)?.dns) {
    check.add({
      path: [...path, 'answer'],
      message: 'answer is for DNS probes',
      received: id,
      expected: 'a probe with dns:',
    });
  }
}

/** The client address a server saw can be expected only of an answer from a server that reports it. */
function checkExpectedClientAddress(check: ReferenceCheck, e: object, at: ExpectationAt): void {
  if (!('clientAddress' in e) || typeof e.clientAddress !== 'string') return;
  const path = [...at.path, 'clientAddress'];
  if (e.clientAddress.includes('/')) check.checkRef(e.clientAddress, path);
  const probe = check.scenario.probes.find((p) => p.id === at.id);
  if (probe && !probe.http && !probe.udp && !probe.download)
    check.add({
      path,
      message: "the address the server saw is reported by the pod agent's HTTP and UDP servers only",
      received: probeKindOf(probe)[0],
      expected: 'a probe with http:, udp: or download:',
    });
  if ('outcome' in e && e.outcome !== 'ok')
    check.add({
      path,
      message: 'can never hold: only an answer reports the address the server saw',
      received: `outcome: ${String(e.outcome)}`,
      expected: 'outcome: ok',
    });
}

/** The pod or host expected to serve exists. */
function checkExpectedServer(check: ReferenceCheck, e: object, at: ExpectationAt): void {
  const { pod, host } = check.names;
  if ('servedBy' in e && typeof e.servedBy === 'string' && !pod.has(e.servedBy) && !host.has(e.servedBy)) {
    check.add({
      path: [...at.path, 'servedBy'],
      message: 'unknown pod or host',
      received: e.servedBy,
      expected: `one of: ${[...pod, ...host].join(', ')}`,
    });
  }
}

/** What a step names exists, its own checks hold, and the topology has the CNI shape it needs. */
function checkStep(check: ReferenceCheck, step: PhaseSections['steps'][number], at: Path): void {
  const t = check.scenario.topology;
  const [kind, spec] = stepKindOf(step);
  for (const r of kind.refs(spec)) check.checkRef(r.ref, [...at, kind.key, ...r.path]);
  for (const issue of kind.check?.(spec, t) ?? []) check.add({ ...issue, path: [...at, kind.key, ...issue.path] });
  const shapes = kind.cni?.(spec);
  if (shapes && !shapes.includes(t.cni)) {
    check.add({
      path: [...at],
      message: `this step needs the ${shapes.join(' or ')} CNI shape`,
      received: t.cni,
      expected: `topology.cni: ${shapes.join(' | ')}`,
    });
  }
}
