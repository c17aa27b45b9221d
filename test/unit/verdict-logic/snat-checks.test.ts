// An `snat` check (PhaseChecks over a provider's SNAT table): the flow's reply entries the probes added, in
// `cilium-dbg bpf nat list`'s format. It fails where the flow was not SNATed: no entry, only another client's,
// only the original tuple, or only entries that were there before the probes.
import { describe, expect, it } from 'vitest';
import type { ExecResult } from '../../../src/contract/command.ts';
import type { StartedCluster, Target } from '../../../src/contract/provider.ts';
import type { CheckSpec } from '../../../src/model/scenario-schema.ts';
import { PhaseChecks } from '../../../src/observe/expect/run-checks.ts';

const REPLY = (clientPort: number, client = '10.244.1.2') =>
  `TCP IN 172.18.0.100:80 -> 172.18.0.2:${clientPort} XLATE_DST ${client}:${clientPort} Created=2sec ago NeedsCT=1`;
const ORIGINAL = (clientPort: number) =>
  `TCP OUT 10.244.1.2:${clientPort} -> 172.18.0.100:80 XLATE_SRC 172.18.0.2:${clientPort} Created=2sec ago NeedsCT=1`;

const snat = (c: Partial<CheckSpec> = {}) =>
  ({
    id: 'snat-flows',
    on: 'node/node-a',
    snat: { from: 'pod/client', to: 'host/docs', port: 80, protocol: 'tcp' },
    expect: { delta: 1 },
    sum: false,
    background: false,
    absentIsZero: false,
    control: true,
    ...c,
  }) as CheckSpec;

const ADDRESSES: Record<string, string> = { 'pod/client': '10.244.1.2', 'host/docs': '172.18.0.100' };

/** The table read before the probes, then after them; `failure` makes the reading fail. */
async function judge(before: string[], after: string[], check = snat(), failure?: Partial<ExecResult>) {
  const calls: string[] = [];
  let reads = 0;
  const target: Target = {
    ref: 'node/node-a',
    async exec(argv) {
      calls.push(argv.join(' '));
      const lines = reads++ === 0 ? before : after;
      return {
        argv,
        exitCode: 0,
        stdout: `${lines.join('\n')}\n`,
        stderr: '',
        timedOut: false,
        durationMs: 1,
        ...failure,
      };
    },
    spawn: () => {
      throw new Error('no background command');
    },
  };
  const cluster = {
    snatTable: (node: string) => ({
      target,
      argv: ['bpftool', 'map', 'dump', node],
      entries: (out: string) => out.split('\n'),
    }),
  } as unknown as StartedCluster;
  const phase = new PhaseChecks([check], cluster, (ref) => ADDRESSES[ref] ?? ref);
  await phase.start();
  const [result] = await phase.finish();
  return { result: result!, calls };
}

/** The check judged over reads that answer in turn as `answers` says (an Error: the read throws); the last repeats. */
async function reading(answers: (Partial<ExecResult> | Error)[]) {
  let reads = 0;
  const target: Target = {
    ref: 'node/node-a',
    async exec(argv) {
      const answer = answers[Math.min(reads++, answers.length - 1)]!;
      if (answer instanceof Error) throw answer;
      return { argv, exitCode: 0, stdout: '', stderr: '', timedOut: false, durationMs: 1, ...answer };
    },
    spawn: () => {
      throw new Error('no background command');
    },
  };
  const cluster = {
    snatTable: () => ({ target, argv: ['bpftool'], entries: (out: string) => out.split('\n') }),
  } as unknown as StartedCluster;
  const phase = new PhaseChecks([snat()], cluster, (ref) => ADDRESSES[ref] ?? ref);
  await phase.start();
  const [result] = await phase.finish();
  return { result: result! };
}

describe('an snat check', () => {
  it('counts the reply entries of the flow the probes added, read before and after them', async () => {
    const { result, calls } = await judge(
      [ORIGINAL(40000), REPLY(40000)],
      [ORIGINAL(40000), REPLY(40000), ORIGINAL(40010), REPLY(40010)],
    );
    expect(calls).toEqual(['bpftool map dump node-a', 'bpftool map dump node-a']);
    expect(result).toEqual({
      id: 'snat-flows',
      on: 'node/node-a',
      argv: ['bpftool', 'map', 'dump', 'node-a'],
      expected: 'TCP IN host/docs:80 -> * XLATE_DST pod/client:* entries added = 1',
      observed: '1 added (1 -> 2 entries of the flow)',
      matched: true,
      value: 1,
      evidence: [REPLY(40010)],
    });
  });

  it('fails when the probes added no entry of the flow (the flow was not SNATed)', async () => {
    const { result } = await judge([REPLY(40000)], [REPLY(40000)]);
    expect(result).toMatchObject({ matched: false, value: 0, observed: '0 added (1 -> 1 entries of the flow)' });
  });

  it("fails on another client's entry, an original tuple alone, another port or protocol", async () => {
    const others = [
      REPLY(40020, '10.244.1.9'),
      ORIGINAL(40030),
      REPLY(40040).replace('172.18.0.100:80', '172.18.0.100:8080'),
      REPLY(40050).replace(/^TCP/, 'UDP'),
    ];
    const { result } = await judge([], others);
    expect(result).toMatchObject({ matched: false, value: 0 });
  });

  it('does not count an entry that was there before, nor lose one when an older entry expires', async () => {
    const { result } = await judge([REPLY(40000), REPLY(40001)], [REPLY(40001), REPLY(40002)]);
    expect(result).toMatchObject({ matched: true, value: 1, evidence: [REPLY(40002)] });
  });

  it('an entry whose age alone changed is the same entry', async () => {
    const { result } = await judge([REPLY(40000)], [REPLY(40000).replace('2sec ago', '9sec ago')]);
    expect(result).toMatchObject({ matched: false, value: 0 });
  });

  it('is unreadable when the table cannot be read, or the cluster has none', async () => {
    const failed = await judge([], [], snat(), { exitCode: 1, stderr: 'Unable to open map' });
    expect(failed.result).toMatchObject({
      matched: false,
      unreadable: true,
      observed: 'cannot be read before the probes: command failed (exit 1: Unable to open map)',
    });
    const phase = new PhaseChecks([snat()], {} as StartedCluster, (ref) => ref);
    await phase.start();
    expect((await phase.finish())[0]).toMatchObject({
      unreadable: true,
      observed: "cannot be read before the probes: this cluster cannot read a node's SNAT table",
    });
  });

  it("does not count another server's entries on the same port for the same client", async () => {
    const { result } = await judge([], [REPLY(40060).replace('172.18.0.100:80', '172.18.0.200:80')]);
    expect(result).toMatchObject({ matched: false, value: 0, observed: '0 added (0 -> 0 entries of the flow)' });
  });

  it('is unreadable when the table reads before the probes but not after them', async () => {
    const { result } = await reading([
      { stdout: `${REPLY(40000)}\n` },
      { exitCode: 1, stdout: '', stderr: 'map gone' },
    ]);
    expect(result).toMatchObject({
      matched: false,
      unreadable: true,
      observed: 'cannot be read after the probes: command failed (exit 1: map gone)',
    });
  });

  it('says a read that timed out, and a read or a table lookup that threw, as the reason it cannot be read', async () => {
    expect((await reading([{ timedOut: true }])).result.observed).toBe(
      'cannot be read before the probes: command failed (timed out)',
    );
    expect((await reading([new Error('exec: no such container')])).result.observed).toBe(
      'cannot be read before the probes: exec: no such container',
    );
    const cluster = {
      snatTable: () => {
        throw new Error('node node-a runs no Cilium: it has no BPF SNAT table');
      },
    } as unknown as StartedCluster;
    const phase = new PhaseChecks([snat()], cluster, (ref) => ref);
    await phase.start();
    expect((await phase.finish())[0]).toMatchObject({
      unreadable: true,
      observed: 'cannot be read before the probes: node node-a runs no Cilium: it has no BPF SNAT table',
    });
  });

  it('a reported number holds whatever it is', async () => {
    const { result } = await judge([], [], snat({ expect: undefined, report: true }));
    expect(result).toMatchObject({ matched: true, value: 0, reported: true });
  });

  it('is unreadable, naming the first read, when the table reads after the probes but not before them', async () => {
    const { result } = await reading([
      { exitCode: 1, stdout: '', stderr: 'map busy' },
      { stdout: `${REPLY(40000)}\n` },
    ]);
    expect(result).toEqual({
      id: 'snat-flows',
      on: 'node/node-a',
      argv: ['bpftool'],
      expected: 'TCP IN host/docs:80 -> * XLATE_DST pod/client:* entries added = 1',
      observed: 'cannot be read before the probes: command failed (exit 1: map busy)',
      matched: false,
      evidence: [],
      unreadable: true,
    });
  });

  it('names no command when the cluster has no table to read', async () => {
    const phase = new PhaseChecks([snat()], {} as StartedCluster, (ref) => ref);
    await phase.start();
    expect((await phase.finish())[0]!.argv).toEqual([]);
  });

  it('its read gets 10 s, and a failed read comes back as a result, not an exception', async () => {
    const options: unknown[] = [];
    const target = {
      ref: 'node/node-a',
      async exec(argv: string[], o: unknown) {
        options.push(o);
        return { argv, exitCode: 0, stdout: '', stderr: '', timedOut: false, durationMs: 1 };
      },
    };
    const cluster = {
      snatTable: () => ({ target, argv: ['bpftool'], entries: (out: string) => out.split('\n') }),
    } as unknown as StartedCluster;
    const phase = new PhaseChecks([snat()], cluster, (ref) => ADDRESSES[ref] ?? ref);
    await phase.start();
    await phase.finish();
    expect(options).toEqual([
      { timeoutMs: 10_000, reject: false },
      { timeoutMs: 10_000, reject: false },
    ]);
  });

  it('a reported number says it is not asserted', async () => {
    const { result } = await judge([], [], snat({ expect: undefined, report: true }));
    expect(result.expected).toBe(
      'TCP IN host/docs:80 -> * XLATE_DST pod/client:* entries added reported, not asserted',
    );
  });

  it('shows at most 20 of the entries the probes added, and counts them all', async () => {
    const added = Array.from({ length: 21 }, (_, i) => REPLY(41000 + i));
    const { result } = await judge([], added, snat({ expect: { delta: 21 } }));
    expect(result).toMatchObject({ matched: true, value: 21 });
    expect(result.evidence).toEqual(added.slice(0, 20));
  });

  it("an original (OUT) entry is not a reply entry, even with the flow's addresses and port", async () => {
    const out = 'TCP OUT 172.18.0.100:80 -> 172.18.0.2:40000 XLATE_SRC 10.244.1.2:40000 Created=2sec ago NeedsCT=1';
    const { result } = await judge([], [out]);
    expect(result).toMatchObject({ matched: false, value: 0 });
  });

  it('shows an entry as its line, trimmed', async () => {
    const { result } = await judge([], [`    ${REPLY(40000)}   `]);
    expect(result.evidence).toEqual([REPLY(40000)]);
  });
});

it("a phase's other checks never read the SNAT table", async () => {
  const reads: string[] = [];
  const node: Target = {
    ref: 'node/node-a',
    async exec(argv) {
      reads.push(argv.join(' '));
      return { argv, exitCode: 0, stdout: '   1   60 DROP\n', stderr: '', timedOut: false, durationMs: 1 };
    },
    spawn: () => {
      throw new Error('no background command');
    },
  };
  const cluster = {
    target: () => node,
    snatTable: () => ({ target: node, argv: ['bpftool'], entries: (out: string) => out.split('\n') }),
  } as unknown as StartedCluster;
  const counter = {
    id: 'drops',
    on: 'node/node-a',
    cmd: 'iptables -L',
    counter: '^\\s*(\\d+)\\s+\\d+\\s+DROP',
    expect: { delta: 0 },
    sum: false,
    background: false,
    absentIsZero: false,
  } as CheckSpec;
  const phase = new PhaseChecks([counter], cluster, (ref) => ref);
  await phase.start();
  expect((await phase.finish())[0]).toMatchObject({ matched: true });
  expect(reads).toEqual(['iptables -L', 'iptables -L']);
});
