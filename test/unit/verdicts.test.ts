// Verdicts that cannot lie, without a lab: steps must prove they fired, checks cannot hold vacuously,
// outcomes come from packets, phases must assert something, and mutants are judged on observations.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { ExecOptions, ExecResult } from '../../src/contract/command.ts';
import type { StartedCluster, Target } from '../../src/contract/provider.ts';
import { expandStep } from '../../src/model/steps/registry.ts';
import { runForegroundStep, startBackgroundStep, StepFailedError } from '../../src/engine/run/run-steps.ts';
import { PhaseChecks } from '../../src/observe/expect/run-checks.ts';
import { matchExpectation } from '../../src/observe/expect/match-expectation.ts';
import { ScenarioValidationError } from '../../src/model/errors.ts';
import { parseScenario } from '../../src/model/load-scenario.ts';
import type { CheckSpec, StepSpec } from '../../src/model/scenario-schema.ts';
import { classifyCurl, connectAnswer, ignoredAnswers } from '../../src/observe/probes/classify.ts';
import { parseTcpdumpLine } from '../../src/observe/probes/packet-watch.ts';
import { nslookupAnswers } from '../../src/observe/probes/kinds/dns.ts';
import { swappedOutcomes } from '../../src/engine/mutate/mutate-scenario.ts';
import type { ScenarioResult } from '../../src/engine/run/results.ts';

/** A cluster whose commands answer from a script: argv joined by spaces -> result. */
function scriptedCluster(answers: Record<string, Partial<ExecResult>>): StartedCluster {
  const target = (ref: string): Target => ({
    ref,
    async exec(argv: readonly string[], _options?: ExecOptions): Promise<ExecResult> {
      const a = answers[argv.join(' ')] ?? { exitCode: 0, stdout: '' };
      return { argv, exitCode: 0, stdout: '', stderr: '', timedOut: false, durationMs: 1, ...a };
    },
    spawn: () => {
      throw new Error('not scripted');
    },
  });
  return {
    target,
    node: (n: string) => target(`node/${n}`),
    pod: (n: string) => target(`pod/${n}`),
    address: () => '10.0.0.1',
    path: (r: string) => r,
    perform: async () => {},
  } as unknown as StartedCluster;
}

const step = (yaml: StepSpec) => expandStep(yaml, (r) => r)[0]!;
const signal = new AbortController().signal;
const describeAction = () => ['action'];
const run = (s: { run: Partial<NonNullable<StepSpec['run']>> }) =>
  ({ run: { ...{ background: false, lead: 50, timeout: '30s', expect: { exit: 0 } }, ...s.run } }) as StepSpec;

describe('steps prove they fired', () => {
  it('a command that exits non-zero fails the step with the command, where it ran and its output', async () => {
    const cluster = scriptedCluster({
      'tc qdisc add dev x root tbf': { exitCode: 2, stderr: 'Error: Exclusivity flag on' },
    });
    const e = await runForegroundStep(
      cluster,
      step(run({ run: { on: 'node/a', cmd: 'tc qdisc add dev x root tbf' } })),
      describeAction,
      signal,
    ).catch((x) => x);
    expect(e).toBeInstanceOf(StepFailedError);
    expect(e.message).toMatch(
      /step failed on node\/a: tc qdisc add dev x root tbf\n {2}exit 2, expected 0\n {2}output:\n {4}Error: Exclusivity flag on/,
    );
  });

  it('a background command must print its evidence line, or the step fails (the injector that never injected)', async () => {
    const argv = '/bin/inject --port 8080';
    const silent = scriptedCluster({
      [argv]: { exitCode: 0, stdout: '{"outcome":"error","error":"sendto(IPPROTO_RAW): Operation not permitted"}' },
    });
    const command = step(
      run({
        run: { on: 'pod/web', cmd: argv, background: true, expect: { exit: 'any', prints: '"outcome":"injected"' } },
      }),
    );
    const e = await startBackgroundStep(silent, command as never, signal)
      .finish()
      .catch((x) => x);
    expect(e.message).toMatch(/no line of its output matched \/"outcome":"injected"\//);
    const fired = scriptedCluster({ [argv]: { exitCode: 0, stdout: '{"outcome":"injected"}' } });
    expect((await startBackgroundStep(fired, command as never, signal).finish()).evidence).toBe(
      '{"outcome":"injected"}',
    );
  });

  it('a background command aborted (Ctrl-C) before its finish is awaited is no unhandled rejection: finish() reports it', async () => {
    const aborted = new Error('aborted while running: /bin/inject');
    const cluster = {
      target: (ref: string) => ({ ref, exec: () => Promise.reject(aborted) }),
    } as unknown as StartedCluster;
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const command = step(run({ run: { on: 'pod/web', cmd: '/bin/inject', background: true } }));
      const started = startBackgroundStep(cluster, command as never, signal);
      await new Promise((r) => setTimeout(r, 20)); // the probes run meanwhile
      expect(unhandled).toEqual([]);
      await expect(started.finish()).rejects.toBe(aborted);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });

  it('a command killed by a signal as the run is interrupted (Ctrl-C reaches it first) is the interruption, not a failed step', async () => {
    const cmd = 'sysctl -w net.netfilter.nf_conntrack_tcp_be_liberal=1';
    const killed = scriptedCluster({ [cmd]: { exitCode: undefined } });
    const foreground = step(run({ run: { on: 'node/a', cmd } }));
    // the run's own SIGINT handler aborts a moment after the command ended
    const interrupted = new AbortController();
    setTimeout(() => interrupted.abort(), 10);
    await expect(runForegroundStep(killed, foreground, describeAction, interrupted.signal)).rejects.toMatchObject({
      code: 'ABORTED',
    });
    const background = step(run({ run: { on: 'node/a', cmd, background: true } }));
    await expect(startBackgroundStep(killed, background as never, interrupted.signal).finish()).rejects.toMatchObject({
      code: 'ABORTED',
    });
    // with no interruption, a signal is the step's failure
    await expect(runForegroundStep(killed, foreground, describeAction, signal)).rejects.toThrow(
      /exit signal, expected 0/,
    );
  });

  it('a sysctl is read back: a value that did not stick fails the step', async () => {
    const s = { sysctl: { on: 'node/a', name: 'net.netfilter.nf_conntrack_tcp_be_liberal', value: 1 } } as StepSpec;
    const stuck = scriptedCluster({ 'sysctl -n net.netfilter.nf_conntrack_tcp_be_liberal': { stdout: '0\n' } });
    await expect(runForegroundStep(stuck, step(s), describeAction, signal)).rejects.toThrow(
      /read back `sysctl -n net.netfilter.nf_conntrack_tcp_be_liberal`: "0", expected "1"/,
    );
    const ok = scriptedCluster({ 'sysctl -n net.netfilter.nf_conntrack_tcp_be_liberal': { stdout: '1\n' } });
    expect((await runForegroundStep(ok, step(s), describeAction, signal)).evidence).toBe(
      'sysctl -n net.netfilter.nf_conntrack_tcp_be_liberal = 1',
    );
  });
});

describe('checks cannot hold vacuously', () => {
  const check = (c: Partial<CheckSpec>) =>
    ({
      id: 'c',
      on: 'node/a',
      cmd: 'iptables -L KUBE-FORWARD -v -x -n',
      sum: false,
      background: false,
      absentIsZero: false,
      ...c,
    }) as CheckSpec;
  const finish = async (cluster: StartedCluster, c: CheckSpec) => {
    const checks = new PhaseChecks([c], cluster, (r) => r);
    await checks.start();
    return (await checks.finish())[0]!;
  };

  it('a counter whose pattern matches no line fails with "no line matched" (delta 0 would hold otherwise)', async () => {
    const cluster = scriptedCluster({
      'iptables -L KUBE-FORWARD -v -x -n': { stdout: 'Chain KUBE-FORWARD (1 references)\n' },
    });
    const r = await finish(
      cluster,
      check({ counter: '^\\s*(\\d+)\\s+\\d+\\s+DROP\\s.*ctstate INVALID', expect: { delta: 0 } }),
    );
    expect(r).toMatchObject({
      matched: false,
      observed: expect.stringMatching(/^cannot be read before the probes: no line matched \//),
    });
  });

  it('absentIsZero reads 0 when the line may legitimately be absent', async () => {
    const cluster = scriptedCluster({
      'iptables -L KUBE-FORWARD -v -x -n': { stdout: 'Chain KUBE-FORWARD (1 references)\n' },
    });
    const r = await finish(cluster, check({ counter: 'DROP (\\d+)', absentIsZero: true, expect: { delta: 0 } }));
    expect(r).toMatchObject({ matched: true, observed: 'delta 0 (0 -> 0, no line: absent reads 0)' });
  });

  it('a matches check fails when its command failed, even for count 0', async () => {
    const cluster = scriptedCluster({
      'iptables -S KUBE-FORWARD': { exitCode: 1, stderr: 'iptables: No chain/target/match by that name.' },
    });
    const r = await finish(
      cluster,
      check({ cmd: 'iptables -S KUBE-FORWARD', matches: 'ctstate INVALID -j DROP', expect: { count: 0 } }),
    );
    expect(r).toMatchObject({
      matched: false,
      observed: 'command failed (exit 1: iptables: No chain/target/match by that name.)',
    });
  });

  it('checks naming the same command on the same machine share one read per moment; each is judged on its own', async () => {
    const calls: string[] = [];
    const drops = new Map<string, number>();
    const base = scriptedCluster({});
    const cluster = {
      ...base,
      target: (ref: string) => ({
        ...base.target(ref),
        async exec(argv: readonly string[]) {
          calls.push(`${ref} ${argv.join(' ')}`);
          drops.set(ref, (drops.get(ref) ?? 1) + 2); // +2 between two reads of a machine
          const stdout = `    ${drops.get(ref)}   180 DROP       0    --  *      *       0.0.0.0/0   0.0.0.0/0   ctstate INVALID\n`;
          return { argv, exitCode: 0, stdout, stderr: '', timedOut: false, durationMs: 1 };
        },
      }),
    } as StartedCluster;
    const checks = new PhaseChecks(
      [
        check({ id: 'drops', counter: '^\\s*(\\d+)\\s.*DROP', expect: { delta: 2 } }),
        check({ id: 'rule', matches: 'ctstate INVALID', expect: { count: 1 } }),
        check({ id: 'drops-b', on: 'node/b', counter: '^\\s*(\\d+)\\s.*DROP', expect: { delta: 2 } }),
      ],
      cluster,
      (r) => r,
    );
    await checks.start();
    const results = await checks.finish();
    expect(calls.sort()).toEqual([
      'node/a iptables -L KUBE-FORWARD -v -x -n',
      'node/a iptables -L KUBE-FORWARD -v -x -n',
      'node/b iptables -L KUBE-FORWARD -v -x -n',
      'node/b iptables -L KUBE-FORWARD -v -x -n',
    ]);
    expect(results.map((r) => [r.id, r.matched])).toEqual([
      ['drops', true],
      ['rule', true],
      ['drops-b', true],
    ]);
  });
});

describe('outcomes from the wire', () => {
  const client = '10.244.1.2';
  const target = { ip: '10.96.0.21', port: 80 };
  const syn = 'IP 10.244.1.2.44186 > 10.96.0.21.80: Flags [S], seq 1, win 64240, length 0';
  const packets = (...lines: string[]) => lines.map((l) => parseTcpdumpLine(l)!);
  const curl7 = {
    exitCode: 7,
    stderr: "curl: (7) Failed to connect to 10.96.0.21 port 80 after 0 ms: Couldn't connect to server",
    httpCode: 0,
    body: '',
  };

  it('a RST answering the SYN is refused, naming its sender (curl says only "Couldn\'t connect")', () => {
    const c = classifyCurl(
      curl7,
      packets(syn, 'IP 10.96.0.21.80 > 10.244.1.2.44186: Flags [R.], seq 0, ack 2, win 0, length 0'),
      client,
      target,
    );
    expect(c).toMatchObject({
      outcome: 'refused',
      source: '10.96.0.21:80',
      reason: expect.stringMatching(/^RST from 10\.96\.0\.21:80 in answer to the SYN to 10\.96\.0\.21:80/),
    });
  });

  it("a RST that missed its reverse NAT is not the client's answer: its socket ignores it, and the verdict names it", () => {
    // REJECT --reject-with tcp-reset after the DNAT: the RST leaves from the backend's address, the client's socket drops it
    const unNated = packets(syn, 'IP 10.244.1.3.8080 > 10.244.1.2.44186: Flags [R.], seq 0, ack 2, win 0, length 0');
    expect(connectAnswer(unNated, client)).toBeUndefined();
    const c = classifyCurl(
      { exitCode: 28, stderr: 'curl: (28) Connection timed out after 800 milliseconds', httpCode: 0, body: '' },
      unNated,
      client,
      target,
    );
    expect(c.outcome).toBe('timeout');
    expect(c.reason).toContain(
      'RST from 10.244.1.3:8080 ignored by the client: not from 10.96.0.21:80, where its SYN went',
    );
  });

  it("an ICMP error about another address is not the client's answer either", () => {
    expect(
      connectAnswer(packets(syn, 'IP 10.99.0.2 > 10.244.1.2: ICMP host 10.99.0.2 unreachable, length 68'), client),
    ).toBeUndefined();
    expect(
      ignoredAnswers(packets(syn, 'IP 10.99.0.2 > 10.244.1.2: ICMP host 10.99.0.2 unreachable, length 68'), client),
    ).toEqual([
      'ICMP host-unreachable from 10.99.0.2 about 10.99.0.2 ignored by the client: its SYN went to 10.96.0.21:80',
    ]);
  });

  it.each([
    [
      'IP 10.244.1.1 > 10.244.1.2: ICMP 10.96.0.21 tcp port 80 unreachable, length 68',
      'refused',
      'ICMP port-unreachable (type 3 code 3) from 10.244.1.1 about 10.96.0.21 tcp port 80',
    ],
    [
      'IP 10.99.0.2 > 10.244.1.2: ICMP host 10.96.0.21 unreachable, length 68',
      'unreachable',
      'ICMP host-unreachable (type 3 code 1) from 10.99.0.2',
    ],
    [
      'IP 10.99.0.2 > 10.244.1.2: ICMP net 10.96.0.21 unreachable, length 68',
      'unreachable',
      'ICMP net-unreachable (type 3 code 0)',
    ],
    [
      'IP 10.99.0.2 > 10.244.1.2: ICMP host 10.96.0.21 unreachable - admin prohibited filter, length 68',
      'unreachable',
      'ICMP admin-prohibited (type 3 code 13)',
    ],
    [
      'IP 10.99.0.2 > 10.244.1.2: ICMP host 10.96.0.21 unreachable - admin prohibited, length 68',
      'unreachable',
      'ICMP host-prohibited (type 3 code 10)',
    ],
  ])('ICMP %s is %s', (line, outcome, reason) => {
    const c = connectAnswer(packets(syn, line), client);
    expect(c?.outcome).toBe(outcome);
    expect(c?.reason).toContain(reason);
  });

  it("a connect() that failed with no packet sent is named by its errno; curl's words are the last resort", () => {
    expect(classifyCurl(curl7, [], client, target, 'EHOSTUNREACH')).toMatchObject({
      outcome: 'unreachable',
      reason: expect.stringContaining('EHOSTUNREACH; no packet left it'),
    });
    expect(classifyCurl(curl7, [], client, target).outcome).toBe('error');
  });

  it('ok takes its source from the SYN-ACK on the wire, not from the URL', () => {
    const c = classifyCurl(
      { exitCode: 0, stderr: '', httpCode: 200, body: 'web\n' },
      packets(syn, 'IP 10.96.0.21.80 > 10.244.1.2.44186: Flags [S.], seq 5, ack 2, win 65160, length 0'),
      client,
      target,
    );
    expect(c).toMatchObject({ outcome: 'ok', source: '10.96.0.21:80', servedBy: 'web' });
  });

  it('a DNS answer is compared when the expectation names an address', () => {
    const observed = { outcome: 'ok' as const, summary: 's', answers: ['10.96.0.99'], durationMs: 1, detail: {} };
    const m = matchExpectation({ outcome: 'ok', answer: 'svc/kube-dns' }, observed, () => '10.96.0.10');
    expect(m).toMatchObject({
      matched: false,
      mismatch: expect.stringMatching(
        /^expected ok, observed wrong-answer \(answer 10\.96\.0\.99, expected 10\.96\.0\.10\)/,
      ),
    });
    expect(
      nslookupAnswers(
        'Server:\t\t10.96.0.10\nAddress:\t10.96.0.10#53\n\nName:\tkube-dns.kube-system.svc.cluster.local\nAddress: 10.96.0.10\n',
      ),
    ).toEqual(['10.96.0.10']);
  });
});

describe('a fault or fix must assert something', () => {
  const seed = readFile(new URL('../../scenarios/br-netfilter-clusterip-same-node.yaml', import.meta.url), 'utf8');
  const issues = (text: string) => {
    try {
      parseScenario(text, 'bad.yaml');
    } catch (e) {
      if (e instanceof ScenarioValidationError) return e.message;
      throw e;
    }
    return '';
  };

  it('an empty fault phase (no steps, nothing expected) is invalid input, at its line', async () => {
    const text = (await seed).replace(/^fault:\n[\s\S]*?(?=^fixes:)/m, 'fault:\n  steps: []\n  expect: {}\n\n');
    const line = text.split('\n').indexOf('  steps: []') + 1;
    expect(issues(text)).toContain(`bad.yaml:${line}:10: fault.steps: a fault or fix needs at least one step`);
    expect(issues(text)).toContain('fault.expect: this phase asserts nothing');
  });

  it('a negative control needs a check proving its steps took effect', async () => {
    const text = (await seed).replace(
      '  - name: load-br-netfilter\n',
      '  - name: load-br-netfilter\n    control: not-a-fix\n',
    );
    expect(issues(text)).toMatch(/fixes\[0\]\.checks: a negative control needs a check/);
  });
});

describe('mutants judged on observations', () => {
  it('a swapped outcome is killed only if every other outcome fails on the original observations', () => {
    const scenario = parseScenario(
      `id: s
title: t
topology: { cni: bridge, nodes: [{ name: a, podCIDR: 10.244.1.0/24 }], pods: [{ name: c, node: a }] }
probes: [{ id: p, from: c, repeat: 4, http: { to: pod/c, port: 80 } }]
baseline: { expect: { p: ok } }
fault: { steps: [{ run: { on: node/a, cmd: "true" } }], expect: { p: { outcome: reset, count: { max: 3 }, otherwise: ok } } }
fixes: [{ steps: [{ run: { on: node/a, cmd: "true" } }], expect: { p: ok } }]
`,
      's.yaml',
    );
    const runs = Array.from({ length: 4 }, () => ({ outcome: 'ok' as const, summary: 'ok', durationMs: 1 }));
    const original = {
      phases: [
        {
          name: 'faulted',
          variant: 'fix',
          probes: [
            {
              id: 'p',
              observed: 'ok',
              summary: '4 ok',
              durationMs: 1,
              detail: { runs, distribution: { runs: 4, outcomes: { ok: 4 }, servedBy: {} } },
            },
          ],
        },
      ],
      addresses: {},
    } as unknown as ScenarioResult;
    // "at most 3 resets, otherwise ok" holds for 4 ok runs whatever failure it is swapped to: only `ok` kills it
    const [m] = swappedOutcomes(scenario, original);
    expect(m).toMatchObject({
      killed: false,
      reason: expect.stringMatching(/^still holds with the outcome swapped to timeout, refused/),
    });
  });
});

describe('a step kind is one module', () => {
  it('link-mtu sets the MTU and proves it by showing the link', () => {
    const actions = expandStep({ 'link-mtu': { on: 'pod/client', dev: '{veth/web}', mtu: 1280 } } as StepSpec, (r) =>
      r === 'veth/web' ? 'veth1234' : r,
    );
    expect(actions).toEqual([
      expect.objectContaining({
        kind: 'command',
        on: 'pod/client',
        argv: ['ip', 'link', 'set', 'dev', 'veth1234', 'mtu', '1280'],
      }),
      expect.objectContaining({
        kind: 'command',
        argv: ['ip', '-o', 'link', 'show', 'dev', 'veth1234'],
        expect: { exit: 0, prints: ' mtu 1280 ' },
      }),
    ]);
  });
});
