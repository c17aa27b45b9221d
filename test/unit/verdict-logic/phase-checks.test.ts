// src/observe/expect/run-checks.ts, PhaseChecks: counters read before and after the probes, lines counted
// after them or over a background command's output, and checks that cannot be read.
import { describe, expect, it } from 'vitest';
import { PhaseChecks } from '../../../src/observe/expect/run-checks.ts';
import type { CheckSpec } from '../../../src/model/scenario-schema.ts';
import { fakeCluster, type FakeProcess, type Script } from './fake-cluster.ts';

const CMD = 'iptables -L KUBE-FORWARD -v -x -n';
const DROPS = '^\\s*(\\d+)\\s+\\d+\\s+DROP';
const dropLine = (n: number) => `   ${n}   60 DROP  all  --  *  *  0.0.0.0/0  0.0.0.0/0  ctstate INVALID  `;
const check = (c: Partial<CheckSpec>) =>
  ({ id: 'c', on: 'node/a', cmd: CMD, sum: false, background: false, absentIsZero: false, ...c }) as CheckSpec;

/** Runs `checks` around no probes at all: start() then finish(). */
async function judge(script: Script, ...checks: CheckSpec[]) {
  const { cluster, calls, execOptions } = fakeCluster(script);
  const phase = new PhaseChecks(checks, cluster, (ref) => ({ 'pod/web': '10.244.1.3' })[ref] ?? ref);
  await phase.start();
  return { results: await phase.finish(), calls, execOptions };
}

/** A counter read `before` then `after` (undefined: no such line). */
const counting = (before: number | undefined, after: number | undefined): Script => ({
  exec: (_on, _cmd, nth) => {
    const n = nth === 0 ? before : after;
    return { stdout: `Chain KUBE-FORWARD\n${n === undefined ? '' : dropLine(n)}\n` };
  },
});

describe('a counter', () => {
  it('its change over the probes is judged against the range, with its line as evidence', async () => {
    const { results } = await judge(
      counting(3, 5),
      check({ id: 'drops', counter: DROPS, expect: { delta: { min: 1 } } }),
    );
    expect(results).toEqual([
      {
        id: 'drops',
        on: 'node/a',
        argv: CMD.split(' '),
        expected: 'delta >= 1',
        observed: 'delta 2 (3 -> 5)',
        matched: true,
        value: 2,
        evidence: [dropLine(5).trim()],
      },
    ]);
  });

  it('delta 0 fails when the counter moved, and holds when it did not', async () => {
    expect((await judge(counting(3, 4), check({ counter: DROPS, expect: { delta: 0 } }))).results[0]).toMatchObject({
      expected: 'delta = 0',
      observed: 'delta 1 (3 -> 4)',
      matched: false,
      value: 1,
    });
    expect((await judge(counting(3, 3), check({ counter: DROPS, expect: { delta: 0 } }))).results[0]).toMatchObject({
      observed: 'delta 0 (3 -> 3)',
      matched: true,
      value: 0,
    });
  });

  it('a range fails above its maximum', async () => {
    expect(
      (await judge(counting(0, 9), check({ counter: DROPS, expect: { delta: { min: 1, max: 5 } } }))).results[0],
    ).toMatchObject({ expected: 'delta 1..5', matched: false });
  });

  it('a counter with no line before or after cannot be read: no evidence either way', async () => {
    expect(
      (await judge(counting(undefined, 4), check({ counter: DROPS, expect: { delta: { min: 1 } } }))).results[0],
    ).toEqual({
      id: 'c',
      on: 'node/a',
      argv: CMD.split(' '),
      expected: 'delta >= 1',
      observed: `cannot be read before the probes: no line matched /${DROPS}/`,
      matched: false,
      evidence: [],
      unreadable: true,
    });
    expect(
      (await judge(counting(4, undefined), check({ counter: DROPS, expect: { delta: 0 } }))).results[0],
    ).toMatchObject({
      observed: `cannot be read after the probes: no line matched /${DROPS}/`,
      matched: false,
      unreadable: true,
    });
  });

  it('when neither read worked, the first failure is named', async () => {
    expect(
      (await judge(counting(undefined, undefined), check({ counter: DROPS, expect: { delta: 0 } }))).results[0]!
        .observed,
    ).toBe(`cannot be read before the probes: no line matched /${DROPS}/`);
  });

  it('with absentIsZero, a missing line reads 0 (and says so when it is the last read)', async () => {
    expect(
      (await judge(counting(undefined, 2), check({ counter: DROPS, absentIsZero: true, expect: { delta: 2 } })))
        .results[0],
    ).toMatchObject({ observed: 'delta 2 (0 -> 2)', matched: true, evidence: [dropLine(2).trim()] });
    expect(
      (
        await judge(
          counting(2, undefined),
          check({ counter: DROPS, absentIsZero: true, expect: { delta: { max: 0 } } }),
        )
      ).results[0],
    ).toMatchObject({
      observed: 'delta -2 (2 -> 0, no line: absent reads 0)',
      matched: true,
      evidence: [],
    });
  });

  it('a failed command cannot be read, absentIsZero or not: its exit and the last two lines of its output', async () => {
    const failing: Script = { exec: () => ({ exitCode: 4, stderr: 'one\ntwo\nthree\n', stdout: 'ignored' }) };
    expect(
      (await judge(failing, check({ counter: DROPS, absentIsZero: true, expect: { delta: 0 } }))).results[0],
    ).toMatchObject({
      observed: 'cannot be read before the probes: command failed (exit 4: two / three)',
      unreadable: true,
      matched: false,
    });
  });

  it('a failure without stderr quotes stdout; without output, the exit alone; a timeout or a signal says so', async () => {
    const observed = async (r: object) =>
      (await judge({ exec: () => r }, check({ counter: DROPS, expect: { delta: 0 } }))).results[0]!.observed;
    expect(await observed({ exitCode: 1, stdout: 'iptables: No chain\n' })).toBe(
      'cannot be read before the probes: command failed (exit 1: iptables: No chain)',
    );
    expect(await observed({ exitCode: 1, stdout: ' \n' })).toBe(
      'cannot be read before the probes: command failed (exit 1)',
    );
    expect(await observed({ exitCode: undefined })).toBe(
      'cannot be read before the probes: command failed (exit signal)',
    );
    expect(await observed({ exitCode: undefined, timedOut: true, stdout: dropLine(1) })).toBe(
      'cannot be read before the probes: command failed (timed out)',
    );
  });

  it('with sum, every matching line counts (one per CPU)', async () => {
    const script: Script = {
      exec: (_on, _cmd, nth) => ({ stdout: `cpu=0 invalid=${nth * 2}\ncpu=1 invalid=${nth * 3}\n` }),
    };
    expect(
      (await judge(script, check({ cmd: 'conntrack -S', counter: 'invalid=(\\d+)', sum: true, expect: { delta: 5 } })))
        .results[0],
    ).toMatchObject({
      observed: 'delta 5 (0 -> 5)',
      matched: true,
      evidence: ['cpu=0 invalid=2 | cpu=1 invalid=3'],
    });
  });

  it('a counter that was never read before the probes cannot be judged', async () => {
    const { cluster } = fakeCluster(counting(1, 2));
    const results = await new PhaseChecks(
      [check({ counter: DROPS, expect: { delta: 1 } })],
      cluster,
      (r) => r,
    ).finish();
    expect(results[0]).toMatchObject({
      observed: 'cannot be read before the probes: not read before the probes',
      unreadable: true,
    });
  });

  it('its command gets 10 s, and a failure comes back as a result, not an exception', async () => {
    const { execOptions } = await judge(counting(1, 2), check({ counter: DROPS, expect: { delta: 1 } }));
    expect(execOptions).toEqual([
      { timeoutMs: 10_000, reject: false },
      { timeoutMs: 10_000, reject: false },
    ]);
  });

  it('placeholders in its command are resolved', async () => {
    const { results, calls } = await judge(
      counting(1, 2),
      check({ cmd: 'conntrack -L -d {pod/web}', counter: DROPS, expect: { delta: 1 } }),
    );
    expect(results[0]!.argv).toEqual(['conntrack', '-L', '-d', '10.244.1.3']);
    expect(calls).toEqual(['exec node/a conntrack -L -d 10.244.1.3', 'exec node/a conntrack -L -d 10.244.1.3']);
  });
});

describe("a counter kube-proxy's rewrite may have zeroed (a real cluster says how often it synced)", () => {
  /** Runs `checks` with the node's sync count read as `syncs` gives it, read after read. */
  async function judgeWithSyncs(script: Script, syncs: (number | undefined)[], ...checks: CheckSpec[]) {
    const { cluster, calls } = fakeCluster(script);
    const reads: string[] = [];
    cluster.kubeProxySyncs = async (node) => (reads.push(node), syncs[reads.length - 1]);
    const phase = new PhaseChecks(checks, cluster, (ref) => ref);
    await phase.start();
    return { results: await phase.finish(), calls, reads };
  }
  const rejects = check({ id: 'rejects', counter: DROPS, expect: { delta: { min: 1 } } });

  it('a count that fell short across a sync is not measured, naming the rewrite (not a false 0)', async () => {
    const { results, reads } = await judgeWithSyncs(counting(0, 0), [22, 23], rejects);
    expect(reads).toEqual(['a', 'a']);
    expect(results[0]).toMatchObject({
      observed:
        "not measured: kube-proxy rewrote a's rules between the reads (its sync count 22 -> 23), which starts their counters again from zero (read 0 -> 0)",
      matched: false,
      unreadable: true,
    });
    expect(results[0]!.value).toBeUndefined();
  });

  it('a count that reached its minimum holds across a sync (a rewrite only lowers it); a maximum cannot be trusted', async () => {
    expect((await judgeWithSyncs(counting(0, 1), [22, 23], rejects)).results[0]).toMatchObject({
      observed: "delta 1 (0 -> 1; kube-proxy rewrote a's rules between the reads (its sync count 22 -> 23))",
      matched: true,
      value: 1,
    });
    const capped = check({ counter: DROPS, expect: { delta: { max: 0 } } });
    expect((await judgeWithSyncs(counting(3, 0), [5, 6], capped)).results[0]).toMatchObject({
      matched: false,
      unreadable: true,
    });
    const exact = check({ counter: DROPS, expect: { delta: 0 } });
    expect((await judgeWithSyncs(counting(3, 3), [5, 6], exact)).results[0]!.observed).toMatch(/^not measured: /);
  });

  it('without a sync between the reads, or without a count to read, the delta is judged as read', async () => {
    expect((await judgeWithSyncs(counting(0, 0), [22, 22], rejects)).results[0]).toMatchObject({
      observed: 'delta 0 (0 -> 0)',
      matched: false,
      value: 0,
    });
    expect((await judgeWithSyncs(counting(0, 0), [undefined, 23], rejects)).results[0]!.observed).toBe(
      'delta 0 (0 -> 0)',
    );
  });

  it("a counter that is no netfilter rule's (nstat, conntrack -S) is read as it is: a sync does not touch it", async () => {
    const nstat = check({ cmd: 'nstat -asz IpOutNoRoutes', counter: '^IpOutNoRoutes\\s+(\\d+)', expect: { delta: 0 } });
    const script: Script = { exec: () => ({ stdout: 'IpOutNoRoutes   2   0.0\n' }) };
    const { results, reads } = await judgeWithSyncs(script, [5, 6], nstat);
    expect(reads).toEqual([]);
    expect(results[0]).toMatchObject({ observed: 'delta 0 (2 -> 2)', matched: true });
  });

  it('a reported count is shown with the rewrite named, and still holds', async () => {
    const reported = check({ counter: DROPS, report: true });
    expect((await judgeWithSyncs(counting(4, 0), [1, 2], reported)).results[0]).toMatchObject({
      observed: "delta -4 (4 -> 0; kube-proxy rewrote a's rules between the reads (its sync count 1 -> 2))",
      matched: true,
    });
  });
});

describe('which sync counts are read, and when', () => {
  async function syncReads(script: Script, syncs: (number | undefined)[], ...checks: CheckSpec[]) {
    const { cluster } = fakeCluster(script);
    const reads: string[] = [];
    cluster.kubeProxySyncs = async (node, settled) => (reads.push(`${node} ${settled}`), syncs[reads.length - 1]);
    const phase = new PhaseChecks(checks, cluster, (ref) => ref);
    await phase.start();
    return { results: await phase.finish(), reads };
  }

  it('only nodes with a counter over their rules are asked, settled before the probes and as they are after', async () => {
    const counter = check({ id: 'drops', counter: DROPS, expect: { delta: 0 } });
    const lines = check({ id: 'lines', on: 'node/b', matches: 'DROP', expect: { count: 0 } });
    const inPod = check({ id: 'pod', on: 'pod/web', counter: DROPS, expect: { delta: 0 } });
    const { reads } = await syncReads(counting(1, 1), [1, 1], counter, lines, inPod);
    expect(reads).toEqual(['a true', 'a false']);
  });

  it("a node's other counters (not its rules) are read as they are when its rules were rewritten", async () => {
    const rules = check({ id: 'rules', counter: DROPS, expect: { delta: 0 } });
    const nstat = check({
      id: 'nstat',
      cmd: 'nstat -asz IpOutNoRoutes',
      counter: '^IpOutNoRoutes\\s+(\\d+)',
      expect: { delta: 0 },
    });
    const script: Script = {
      exec: (_on, cmd, nth) =>
        cmd.startsWith('nstat') ? { stdout: 'IpOutNoRoutes   2   0.0\n' } : counting(1, 1).exec(_on, cmd, nth),
    };
    const { results } = await syncReads(script, [5, 6], rules, nstat);
    expect(results.map((r) => [r.id, r.observed])).toEqual([
      ['rules', expect.stringMatching(/^not measured: kube-proxy rewrote a's rules/)],
      ['nstat', 'delta 0 (2 -> 2)'],
    ]);
  });

  it('a sync count that cannot be read after the probes names no rewrite', async () => {
    const rules = check({ counter: DROPS, expect: { delta: 0 } });
    expect((await syncReads(counting(1, 1), [5, undefined], rules)).results[0]).toMatchObject({
      observed: 'delta 0 (1 -> 1)',
      matched: true,
    });
  });

  it('a count not measured across a rewrite shows the line read, or none when the line was absent', async () => {
    const rules = check({ counter: DROPS, expect: { delta: { min: 1 } } });
    expect((await syncReads(counting(1, 1), [5, 6], rules)).results[0]).toMatchObject({
      unreadable: true,
      evidence: [dropLine(1).trim()],
    });
    const absent = check({ counter: DROPS, absentIsZero: true, expect: { delta: { min: 1 } } });
    expect((await syncReads(counting(undefined, undefined), [5, 6], absent)).results[0]).toMatchObject({
      unreadable: true,
      evidence: [],
    });
  });
});

describe('a reported number (report: true, no bound)', () => {
  it('a counter: its change is reported and holds whatever it is', async () => {
    expect(
      (await judge(counting(3, 9), check({ id: 'n', counter: DROPS, report: true, expect: undefined }))).results[0],
    ).toEqual({
      id: 'n',
      on: 'node/a',
      argv: CMD.split(' '),
      reported: true,
      expected: 'delta reported, not asserted',
      observed: 'delta 6 (3 -> 9)',
      matched: true,
      value: 6,
      evidence: [dropLine(9).trim()],
    });
  });

  it('matching lines: their count is reported', async () => {
    expect(
      (
        await judge(
          { exec: () => ({ stdout: 'DROP a\nDROP b\n' }) },
          check({ matches: 'DROP', report: true, expect: undefined }),
        )
      ).results[0],
    ).toMatchObject({
      reported: true,
      expected: 'lines matching /DROP/ reported, not asserted',
      observed: '2 matching line(s)',
      matched: true,
      value: 2,
    });
  });

  it('it still fails when it cannot be read', async () => {
    expect(
      (await judge(counting(undefined, 9), check({ counter: DROPS, report: true, expect: undefined }))).results[0],
    ).toMatchObject({ reported: true, matched: false, unreadable: true });
    expect(
      (await judge({ exec: () => ({ exitCode: 2 }) }, check({ matches: 'DROP', report: true, expect: undefined })))
        .results[0],
    ).toMatchObject({ reported: true, matched: false, unreadable: true, observed: 'command failed (exit 2)' });
  });

  it('an asserted check carries no reported mark', async () => {
    expect(
      (await judge(counting(3, 9), check({ counter: DROPS, expect: { delta: 6 } }))).results[0],
    ).not.toHaveProperty('reported');
  });
});

describe('matching lines', () => {
  const rules = {
    exec: () => ({
      stdout:
        '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP  \n-A KUBE-FORWARD -j ACCEPT\n  -A KUBE-SVC -m conntrack --ctstate INVALID -j DROP\n',
    }),
  };

  it('counted after the probes only, and shown trimmed', async () => {
    const { results, calls } = await judge(
      rules,
      check({ id: 'rule', cmd: 'iptables -S', matches: 'ctstate INVALID -j DROP', expect: { count: 2 } }),
    );
    expect(calls).toEqual(['exec node/a iptables -S']);
    expect(results).toEqual([
      {
        id: 'rule',
        on: 'node/a',
        argv: ['iptables', '-S'],
        expected: 'lines matching /ctstate INVALID -j DROP/ = 2',
        observed: '2 matching line(s)',
        matched: true,
        value: 2,
        evidence: [
          '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
          '-A KUBE-SVC -m conntrack --ctstate INVALID -j DROP',
        ],
      },
    ]);
  });

  it('count 0 fails when a line matches', async () => {
    expect(
      (await judge(rules, check({ cmd: 'iptables -S', matches: '-j ACCEPT', expect: { count: 0 } }))).results[0],
    ).toMatchObject({ observed: '1 matching line(s)', matched: false, evidence: ['-A KUBE-FORWARD -j ACCEPT'] });
  });

  it('evidence stops at 20 lines; the count does not', async () => {
    const many = { exec: () => ({ stdout: Array.from({ length: 25 }, (_, i) => `DROP ${i}`).join('\n') }) };
    const [r] = (await judge(many, check({ matches: 'DROP', expect: { count: { min: 25 } } }))).results;
    expect(r).toMatchObject({ observed: '25 matching line(s)', matched: true });
    expect(r!.evidence).toHaveLength(20);
    expect(r!.evidence[19]).toBe('DROP 19');
  });

  it('a failed command cannot be read, even for count 0', async () => {
    expect(
      (
        await judge(
          { exec: () => ({ exitCode: 1, stderr: 'no chain' }) },
          check({ matches: 'DROP', expect: { count: 0 } }),
        )
      ).results[0],
    ).toEqual({
      id: 'c',
      on: 'node/a',
      argv: CMD.split(' '),
      expected: 'lines matching /DROP/ = 0',
      observed: 'command failed (exit 1: no chain)',
      matched: false,
      evidence: [],
      unreadable: true,
    });
  });
});

describe('background commands', () => {
  const capture = (p: Partial<FakeProcess>): FakeProcess => ({ lines: [], exitCode: 0, ...p });

  it('started before the probes, stopped with SIGINT after them; its printable output is counted', async () => {
    const proc = capture({
      lines: ['listening on eth0', '\x00\x01RST from 10.244.1.3\x00\x02', 'RST from 10.244.1.3 again'],
    });
    const { results, calls } = await judge(
      { exec: () => ({}), spawn: () => proc },
      check({
        id: 'cap',
        cmd: 'tcpdump -i eth0',
        background: true,
        ready: 'listening',
        matches: 'RST',
        expect: { count: 2 },
      }),
    );
    expect(calls).toEqual([
      'spawn node/a tcpdump -i eth0',
      'wait node/a tcpdump -i eth0 for /listening/',
      'stop node/a tcpdump -i eth0 SIGINT',
    ]);
    expect(results).toEqual([
      {
        id: 'cap',
        on: 'node/a',
        argv: ['tcpdump', '-i', 'eth0'],
        expected: 'lines matching /RST/ = 2',
        observed: '2 matching line(s)',
        matched: true,
        value: 2,
        evidence: ['RST from 10.244.1.3', 'RST from 10.244.1.3 again'],
      },
    ]);
  });

  it('strings shorter than 4 characters are not output lines (binary noise)', async () => {
    const proc = capture({ lines: ['RST', '\x00RST!\x01'] });
    expect(
      (
        await judge(
          { exec: () => ({}), spawn: () => proc },
          check({ cmd: 'tcpdump', background: true, matches: 'RST', expect: { count: 1 } }),
        )
      ).results[0],
    ).toMatchObject({ observed: '1 matching line(s)', evidence: ['RST!'] });
  });

  it('without a ready pattern, the probes do not wait for a first line', async () => {
    const { calls, results } = await judge(
      { exec: () => ({}), spawn: () => capture({ lines: [] }) },
      check({ cmd: 'tcpdump', background: true, matches: 'RST', expect: { count: 0 } }),
    );
    expect(calls).toEqual(['spawn node/a tcpdump', 'stop node/a tcpdump SIGINT']);
    expect(results[0]!.matched).toBe(true);
  });

  it('with one, they wait for it', async () => {
    const { calls } = await judge(
      { exec: () => ({}), spawn: () => capture({ lines: ['listening on eth0'] }) },
      check({ cmd: 'tcpdump', background: true, ready: 'listening', matches: 'RST', expect: { count: 0 } }),
    );
    expect(calls).toEqual([
      'spawn node/a tcpdump',
      'wait node/a tcpdump for /listening/',
      'stop node/a tcpdump SIGINT',
    ]);
  });

  it('one that could not be stopped has no exit status: it cannot be read', async () => {
    const stuck = capture({ lines: ['RST seen'], stopFails: new Error('EPERM') });
    expect(
      (
        await judge(
          { exec: () => ({}), spawn: () => stuck },
          check({ cmd: 'tcpdump', background: true, matches: 'RST', expect: { count: 1 } }),
        )
      ).results[0],
    ).toMatchObject({
      observed: 'command failed (exit signal: RST seen)',
      unreadable: true,
    });
  });

  it('one that did not exit 0 cannot be read: its exit and last two lines', async () => {
    const proc = capture({ lines: ['a', 'b', 'permission denied'], exitCode: 1 });
    expect(
      (
        await judge(
          { exec: () => ({}), spawn: () => proc },
          check({ cmd: 'tcpdump', background: true, matches: 'RST', expect: { count: 0 } }),
        )
      ).results[0],
    ).toMatchObject({
      observed: 'command failed (exit 1: b / permission denied)',
      matched: false,
      unreadable: true,
    });
    const killed = capture({ lines: ['x'], exitCode: undefined });
    expect(
      (
        await judge(
          { exec: () => ({}), spawn: () => killed },
          check({ cmd: 'tcpdump', background: true, matches: 'RST', expect: { count: 0 } }),
        )
      ).results[0]!.observed,
    ).toBe('command failed (exit signal: x)');
  });

  it('each background command is judged with its own exit status', async () => {
    const procs: Record<string, FakeProcess> = {
      'tcpdump -i a': capture({ lines: ['RST seen'], exitCode: 0 }),
      'tcpdump -i b': capture({ lines: ['RST seen'], exitCode: 2 }),
    };
    const { results } = await judge(
      { exec: () => ({}), spawn: (_on, cmd) => procs[cmd]! },
      check({ id: 'a', cmd: 'tcpdump -i a', background: true, matches: 'RST', expect: { count: 1 } }),
      check({ id: 'b', cmd: 'tcpdump -i b', background: true, matches: 'RST', expect: { count: 1 } }),
    );
    expect(results.map((r) => [r.id, r.matched, r.observed])).toEqual([
      ['a', true, '1 matching line(s)'],
      ['b', false, 'command failed (exit 2: RST seen)'],
    ]);
  });

  it('counters are read in order around background commands: those before one are read before it starts', async () => {
    const script: Script = {
      exec: (_on, _cmd, nth) => ({ stdout: dropLine(nth) }),
      spawn: () => capture({ lines: ['ready'] }),
    };
    const { calls } = await judge(
      script,
      check({ id: 'first', cmd: 'read first', counter: DROPS, expect: { delta: 1 } }),
      check({ id: 'cap', cmd: 'tcpdump', background: true, matches: 'x', expect: { count: 0 } }),
      check({ id: 'second', cmd: 'read second', counter: DROPS, expect: { delta: 1 } }),
    );
    expect(calls.slice(0, 3)).toEqual(['exec node/a read first', 'spawn node/a tcpdump', 'exec node/a read second']);
  });

  it('one that never prints its ready line fails the start, and what was started is stopped', async () => {
    const first = capture({ lines: ['ready'] });
    const silent = capture({ lines: ['nothing'] });
    const { cluster, calls } = fakeCluster({
      exec: () => ({}),
      spawn: (_on, cmd) => (cmd === 'first' ? first : silent),
    });
    const phase = new PhaseChecks(
      [
        check({ id: 'a', cmd: 'first', background: true, ready: 'ready', matches: 'x', expect: { count: 0 } }),
        check({ id: 'b', cmd: 'second', background: true, ready: 'ready', matches: 'x', expect: { count: 0 } }),
      ],
      cluster,
      (r) => r,
    );
    await expect(phase.start()).rejects.toThrow('second never printed /ready/');
    expect(first.stoppedWith).toBe('SIGINT');
    expect(silent.stoppedWith).toBe('SIGINT');
    expect(calls.filter((c) => c.startsWith('stop'))).toHaveLength(2);
  });
});

describe('{ns/NAME} in a check', () => {
  // a shared cluster prefixes the run's namespaces: kube-proxy's comment names the Service there
  const line = (n: number) =>
    `[${n}:60] -A KUBE-XLB-ABC -m comment --comment "nr-ab12-default/web:http has no local endpoints" -j DROP`;
  const cluster = (after: number): Script => ({
    exec: (_on, _cmd, nth) => ({ stdout: `${line(nth === 0 ? 0 : after)}\n` }),
  });
  const judgeOn = async (script: Script, c: CheckSpec) => {
    const { cluster: fake, calls } = fakeCluster(script);
    const resolve = (ref: string) => (ref.startsWith('ns/') ? `nr-ab12-${ref.slice(3)}` : ref);
    const phase = new PhaseChecks([c], fake, resolve);
    await phase.start();
    return { result: (await phase.finish())[0]!, calls };
  };

  it("resolves in a counter's pattern as literal text, and in its command", async () => {
    const { result, calls } = await judgeOn(
      cluster(2),
      check({
        cmd: 'iptables-save -c -t nat --comment {ns/default}',
        counter: '^\\[(\\d+):\\d+\\] -A \\S+ .*"{ns/default}/web:http has no local endpoints".* -j DROP$',
        expect: { delta: { min: 1 } },
      }),
    );
    expect(result).toMatchObject({ matched: true, observed: 'delta 2 (0 -> 2)' });
    expect(calls[0]).toBe('exec node/a iptables-save -c -t nat --comment nr-ab12-default');
  });

  it('resolves in `matches`, escaped: a dot in the name matches only a dot', async () => {
    const dotted = (ref: string) => (ref === 'ns/default' ? 'a.b' : ref);
    const { cluster: fake } = fakeCluster({ exec: () => ({ stdout: '"a.b/web"\n"axb/web"\n' }) });
    const phase = new PhaseChecks([check({ matches: '"{ns/default}/web"', expect: { count: 1 } })], fake, dotted);
    await phase.start();
    expect((await phase.finish())[0]).toMatchObject({ matched: true, observed: '1 matching line(s)' });
  });
});
