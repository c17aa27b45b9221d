// Verdicts that cannot lie, on the real kernel: every outcome class from the packet behind it, a trigger
// that did not fire errors the phase, a counter that matches nothing fails.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { NetnsProvider } from '../../src/providers/netns/netns-provider.ts';
import { scenarioFailures } from '../../src/engine/run/failures.ts';
import { runScenario } from '../../src/engine/run/run-scenario.ts';
import { loadScenarioFile, parseScenario } from '../../src/model/load-scenario.ts';
import { labSkipReason } from '../lab-support.ts';

const provider = new NetnsProvider();
const signal = new AbortController().signal;
const run = (file: string, text: string, faultOnly = false) =>
  runScenario({ file, scenario: parseScenario(text, file) }, { provider, signal, emit: () => {}, faultOnly });
const scenarioText = (id: string) => readFile(new URL(`../../scenarios/${id}.yaml`, import.meta.url), 'utf8');

describe.skipIf(labSkipReason)('verdicts on the netns lab', () => {
  it('refused, unreachable and ok each name the packet behind them', async () => {
    const loaded = await loadScenarioFile(new URL('../fixtures/outcomes-from-the-wire.yaml', import.meta.url).pathname);
    const result = await runScenario(loaded, { provider, signal, emit: () => {} });
    expect(scenarioFailures(result)).toEqual([]);
    const summary = (phase: string, id: string) =>
      result.phases.find((p) => p.name === phase)!.probes.find((p) => p.id === id)!.summary;
    expect(summary('baseline', 'closed-port')).toMatch(/= refused \(RST from 10\.244\.1\.3:9090 in answer to the SYN/);
    expect(summary('baseline', 'no-endpoints')).toMatch(
      /= unreachable \(ICMP net-unreachable \(type 3 code 0\) from 10\.244\.1\.1/,
    );
    expect(summary('faulted', 'no-endpoints')).toMatch(
      /= refused \(ICMP port-unreachable \(type 3 code 3\) from 10\.244\.1\.1 about 10\.96\.0\.21 tcp port 80/,
    );
    expect(summary('faulted', 'host-unreachable')).toMatch(
      /= unreachable \(ICMP host-unreachable \(type 3 code 1\) from 10\.244\.1\.3/,
    );
    expect(summary('faulted', 'admin-prohibited')).toMatch(
      /= unreachable \(ICMP admin-prohibited \(type 3 code 13\) from 10\.244\.1\.3/,
    );
    expect(summary('faulted', 'local-route')).toMatch(
      /= unreachable \(connect\(\) failed in the client with EHOSTUNREACH; no packet left it/,
    );
    expect(summary('baseline', 'clusterip')).toMatch(
      /= ok \(HTTP 200; SYN-ACK from 10\.96\.0\.20:80; the server saw the client as 10\.244\.1\.2:\d+\)/,
    );
  });

  it("a udp probe's ok, refused, unreachable and unexpected-source each name the packet behind them", async () => {
    const loaded = await loadScenarioFile(
      new URL('../fixtures/udp-outcomes-from-the-wire.yaml', import.meta.url).pathname,
    );
    const result = await runScenario(loaded, { provider, signal, emit: () => {} });
    expect(scenarioFailures(result)).toEqual([]);
    const probe = (phase: string, id: string) =>
      result.phases.find((p) => p.name === phase && p.variant === 'load-it-again')!.probes.find((p) => p.id === id)!;
    expect(probe('baseline', 'pod').summary).toMatch(
      /= ok \(echo answered \(it saw the client as 10\.244\.1\.2:\d+\) from 10\.244\.1\.3#5000 \(on the wire: 10\.244\.1\.3\.5000 > 10\.244\.1\.2\.\d+\)\)/,
    );
    expect(probe('baseline', 'clusterip').detail).toMatchObject({
      servedBy: 'echo',
      clientAddress: expect.stringMatching(/^10\.244\.1\.2:\d+$/),
      source: '10.96.0.30:80',
    });
    expect(probe('baseline', 'closed-port').summary).toMatch(
      /= refused \(ICMP port-unreachable \(type 3 code 3\) from 10\.244\.1\.3; no reply from 10\.244\.1\.3#5001\)/,
    );
    expect(probe('baseline', 'no-endpoints').summary).toMatch(
      /= unreachable \(ICMP net-unreachable \(type 3 code 0\) from 10\.244\.1\.1; no reply from 10\.96\.0\.31#80\)/,
    );
    expect(probe('faulted', 'clusterip').summary).toMatch(
      /= unexpected-source \(reply from unexpected source: 10\.244\.1\.3#5000, expected 10\.96\.0\.30#80 \(on the wire: 10\.244\.1\.3\.5000 > 10\.244\.1\.2\.\d+\)\)/,
    );
  });

  it('an injector that could not send its segment errors the phase, naming the step (it never passes)', async () => {
    // the web pod drops the 56-byte forged segment: the injector's sendto() gets EPERM and it exits 3
    const text = (await scenarioText('conntrack-invalid-reset')).replace(
      '    # the trigger:',
      '    - run: { on: pod/web, cmd: "iptables -A OUTPUT -p tcp -m length --length 56 -j DROP" }\n    # the trigger:',
    );
    const result = await run('suppressed.yaml', text);
    expect(result.verdict).toBe('errored');
    const faulted = result.phases.find((p) => p.name === 'faulted')!;
    expect(faulted.status).toBe('errored');
    expect(faulted.error?.message).toMatch(
      /^step failed on pod\/web: \S*inject-ahead\S* --iface eth0 --port 8080 --timeout-ms 5000\n {2}exit 3, expected 0/,
    );
    expect(faulted.error?.message).toMatch(/Operation not permitted/);
    expect(result.phases.filter((p) => p.name === 'fixed')).toEqual([]);
  });

  it('flanneld left out of a reboot leaves no VTEP; its start writes it and its peers again, a restart a deleted route', async () => {
    const loaded = await loadScenarioFile(new URL('../fixtures/flannel-restart.yaml', import.meta.url).pathname);
    const result = await runScenario(loaded, { provider, signal, emit: () => {} });
    expect(scenarioFailures(result)).toEqual([]);
    expect(result.phases.map((p) => `${p.variant}/${p.name}: ${p.status}`)).toEqual([
      'start-flanneld/baseline: passed',
      'start-flanneld/faulted: passed',
      'start-flanneld/fixed: passed',
      'restart-over-a-deleted-route/baseline: passed',
      'restart-over-a-deleted-route/faulted: passed',
      'restart-over-a-deleted-route/fixed: passed',
    ]);
  });

  it("a UDP port the Service gains clears its VIP's entries, so a socket blackholed before it reaches the pod", async () => {
    const loaded = await loadScenarioFile(new URL('../fixtures/udp-port-gained.yaml', import.meta.url).pathname);
    const result = await runScenario(loaded, { provider, signal, emit: () => {} });
    expect(scenarioFailures(result)).toEqual([]);
    expect(result.phases.map((p) => `${p.name}: ${p.status}`)).toEqual([
      'baseline: passed',
      'faulted: passed',
      'fixed: passed',
    ]);
  });

  it("a phase's probes run in the order of the `probes:` list, not of its `expect` keys", async () => {
    const text = (await scenarioText('br-netfilter-clusterip-same-node')).replace(
      '    clusterip: { outcome: ok, servedBy: web }\n    pod-ip: { outcome: ok, servedBy: web }\n',
      '    pod-ip: { outcome: ok, servedBy: web }\n    clusterip: { outcome: ok, servedBy: web }\n',
    );
    expect(text).toContain('    pod-ip: { outcome: ok, servedBy: web }\n    clusterip:');
    const result = await run('expect-reordered.yaml', text, true);
    const baseline = result.phases.find((p) => p.name === 'baseline')!;
    expect(baseline.probes.map((p) => p.id)).toEqual(['clusterip', 'pod-ip']);
  });

  it("a RST the client's socket ignores is named, not taken as its outcome: timeout, not refused", async () => {
    // REJECT after the ClusterIP's DNAT answers from the backend's address: the client's socket never sees a RST for
    // its connection to the ClusterIP; the same RST to a connection to the pod IP is that connection's answer
    const text = (await scenarioText('br-netfilter-clusterip-same-node')).replace(/^fault:\n[\s\S]*?(?=^fixes:)/m, () =>
      [
        'fault:',
        '  steps:',
        '    - run: { on: node/node-a, cmd: "iptables -I FORWARD -p tcp -d 10.244.1.3 --dport 8080 -j REJECT --reject-with tcp-reset" }',
        '  expect:',
        '    clusterip: timeout',
        '    pod-ip: refused',
        '',
        '',
      ].join('\n'),
    );
    const result = await run('reject-after-dnat.yaml', text, true);
    const faulted = result.phases.find((p) => p.name === 'faulted')!;
    expect(faulted.status).toBe('passed');
    expect(faulted.probes.find((p) => p.id === 'clusterip')!.summary).toMatch(
      /= timeout \(.*RST from 10\.244\.1\.3:8080 ignored by the client: not from 10\.96\.0\.20:80, where its SYN went\)/,
    );
    expect(faulted.probes.find((p) => p.id === 'pod-ip')!.summary).toMatch(
      /= refused \(RST from 10\.244\.1\.3:8080 in answer to the SYN to 10\.244\.1\.3:8080/,
    );
  });

  it('a counter whose pattern matches no line fails the check with "no line matched"', async () => {
    const text = (await scenarioText('conntrack-invalid-reset')).replace(
      "counter: '\\binvalid=(\\d+)'",
      "counter: '\\bnosuchfield=(\\d+)'",
    );
    const result = await run('no-line.yaml', text, true);
    expect(result.verdict).toBe('failed');
    const check = result.phases[0]!.checks.find((c) => c.id === 'conntrack-invalid')!;
    expect(check).toMatchObject({
      matched: false,
      observed: expect.stringMatching(/^cannot be read before the probes: no line matched \//),
    });
  });
});
