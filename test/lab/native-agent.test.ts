// The netns lab runs the native pod agent (src/providers/netns/agent/pod-agent.c) where real clusters run
// pod-agent.mjs: both must serve the same HTTP, UDP and DNS answers and print the same JSON for the same probe.
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId, runPrefix } from '../../src/contract/run-id.ts';
import type { NetnsLab } from '../../src/providers/netns/netns-lab.ts';
import { provisionNetnsLab } from '../../src/providers/netns/provision-netns-lab.ts';
import { dnsServiceTopology, labSkipReason } from '../lab-support.ts';

const topology = dnsServiceTopology({ web: true });

/** The lab's servers run natively on the topology's ports; the Node agent's twins beside them on these. */
const NODE_HTTP = 8081;
const NODE_DNS = 54;
/** Both agents serving a records file (a headless Service's several answers), natively and by Node. */
const FILE_DNS = 55;
const NODE_FILE_DNS = 56;
/** Both UDP servers run beside the topology's: the native one on UDP_PORT, the Node agent's on NODE_UDP. */
const UDP_PORT = 5000;
const NODE_UDP = 5001;
/** Routed nowhere from the client (an `unreachable` route there): connect() fails locally. */
const UNREACHABLE = '192.0.2.1';

describe.skipIf(labSkipReason)('native pod agent', () => {
  let lab: NetnsLab;
  let recordsFile = '';
  beforeAll(async () => {
    const runId = newRunId();
    lab = await provisionNetnsLab(topology, {
      runId,
      prefix: runPrefix(runId),
      signal: new AbortController().signal,
      log: () => {},
    });
    recordsFile = join(dirname(lab.dnsRecordsFile), 'twin-records');
    await writeFile(
      recordsFile,
      'peers.default.svc.cluster.local=10.244.9.2\nPeers.default.svc.cluster.local=10.244.9.3\nempty.default.svc.cluster.local\n',
    );
    const twins = [
      lab.pod('web').spawn([...lab.nodeAgentCommand, 'http', `--port=${NODE_HTTP}`, '--name=web']),
      lab.pod('web').spawn([...lab.agentCommand, 'udp', `--port=${UDP_PORT}`, '--name=web']),
      lab.pod('web').spawn([...lab.nodeAgentCommand, 'udp', `--port=${NODE_UDP}`, '--name=web']),
      lab
        .pod('dns')
        .spawn([
          ...lab.nodeAgentCommand,
          'dns',
          `--port=${NODE_DNS}`,
          '--name=dns',
          '--record=dns.default.svc.cluster.local=10.96.0.10',
        ]),
      ...[
        [lab.agentCommand, FILE_DNS],
        [lab.nodeAgentCommand, NODE_FILE_DNS],
      ].map(([agent, port]) =>
        lab
          .pod('dns')
          .spawn([...(agent as readonly string[]), 'dns', `--port=${port}`, '--name=dns', `--records=${recordsFile}`]),
      ),
    ];
    for (const twin of twins) lab.track(twin);
    await Promise.all(twins.map((twin) => twin.waitFor(/^ready /, 5000)));
    await lab.pod('client').exec(['ip', 'route', 'add', 'unreachable', `${UNREACHABLE}/32`]);
  }, 60_000);
  afterAll(() => lab?.destroy());

  const client = async (argv: string[]) => (await lab.pod('client').exec(argv, { reject: false })).stdout;
  /** The same command against the native server and its Node twin; `{port}` is the server's port. */
  const servers = async (native: number, node: number, argv: string[], normalize: (out: string) => string) => {
    const at = (port: number) => argv.map((a) => a.replaceAll('{port}', String(port)));
    return { native: normalize(await client(at(native))), agent: normalize(await client(at(node))) };
  };
  /** The same agent subcommand run natively and by pod-agent.mjs, durations aside, and an ephemeral port's number. */
  const agents = async (args: string[]) => {
    const run = async (argv: readonly string[]) => {
      const { durationMs: _varies, ...json } = JSON.parse(await client([...argv, ...args])) as Record<string, unknown>;
      const given = args.find((a) => a.startsWith('--sport='))?.slice('--sport='.length);
      if (typeof json.sport === 'number' && !given) json.sport = json.sport > 1024 ? 'ephemeral' : json.sport;
      return json;
    };
    return { native: await run(lab.agentCommand), agent: await run(lab.nodeAgentCommand) };
  };

  it('is built with the lab and runs its servers', () => {
    expect(lab.agentCommand).toEqual([expect.stringMatching(/pod-agent-[0-9a-f]{12}$/)]);
  });

  it('serves HTTP as the agent does: body and headers, /bytes/N, keep-alive, connections at once', async () => {
    const web = lab.address('pod/web');
    // the client's ephemeral port differs from one connection to the next
    const withoutDate = (out: string) =>
      out.replace(/^Date: .*\r\n/m, '').replace(/^(x-client-address: [\d.]+):\d+\r\n/m, '$1:PORT\r\n');
    const root = await servers(8080, NODE_HTTP, ['curl', '-sS', '-D', '-', `http://${web}:{port}/`], withoutDate);
    expect(root.native).toEqual(root.agent);
    expect(root.native).toMatch(
      new RegExp(`^HTTP/1\\.1 200 OK\r\nx-served-by: web\r\nx-client-address: ${lab.address('pod/client')}:PORT\r\n`),
    );
    expect(root.native).toMatch(/\r\n\r\nweb\n$/);
    for (const argv of [
      ['curl', '-sS', '-D', '-', '-o', '/dev/null', '-w', '%{size_download}', `http://${web}:{port}/bytes/3000000`],
      ['curl', '-sS', '-D', '-', '-H', 'Connection: close', `http://${web}:{port}/other`],
      ['curl', '-sS', '-D', '-', '-0', `http://${web}:{port}/`],
      // a second request on the same connection: no new connect
      [
        'curl',
        '-sS',
        '-o',
        '/dev/null',
        '-o',
        '/dev/null',
        '-w',
        '%{num_connects} %{size_download}\n',
        `http://${web}:{port}/`,
        `http://${web}:{port}/bytes/10`,
      ],
      [
        'curl',
        '-sS',
        '-Z',
        '-o',
        '/dev/null',
        '-o',
        '/dev/null',
        '-w',
        '%{size_download}\n',
        `http://${web}:{port}/bytes/2000000`,
        `http://${web}:{port}/bytes/2000000`,
      ],
    ]) {
      const { native, agent } = await servers(8080, NODE_HTTP, argv, withoutDate);
      expect(native, argv.join(' ')).toEqual(agent);
    }
    expect(
      await client(['curl', '-sS', '-o', '/dev/null', '-w', '%{size_download}', `http://${web}:8080/bytes/3000000`]),
    ).toBe('3000000');
  });

  it('closes an idle keep-alive connection when the agent does', async () => {
    const web = lab.address('pod/web');
    // one request, then the seconds until the server closes the connection
    const idle = async (port: number) => {
      const script = `exec 3<>/dev/tcp/${web}/${port}; printf 'GET / HTTP/1.1\\r\\nHost: web\\r\\n\\r\\n' >&3; s=$EPOCHREALTIME; cat <&3 >/dev/null; echo "$s $EPOCHREALTIME"`;
      const [start = 0, end = 0] = (await client(['bash', '-c', script])).trim().split(' ').map(Number);
      return end - start;
    };
    const [native, agent] = await Promise.all([idle(8080), idle(NODE_HTTP)]);
    expect(agent).toBeGreaterThan(1.8);
    expect(agent).toBeLessThan(2.5);
    expect(Math.abs(native - agent)).toBeLessThan(0.3);
  });

  it('answers DNS as the agent does: an A record with TTL 5, NXDOMAIN, NODATA', async () => {
    const dns = lab.address('pod/dns');
    // the server's own address and port, and the query id, differ by design
    const answerOnly = (out: string) => out.replace(/^(Server:|Address:\t|\s*id = ).*\n/gm, '');
    const outputs: string[] = [];
    for (const query of [
      ['-type=A', 'dns.default.svc.cluster.local'],
      ['-type=A', 'nothing.default.svc.cluster.local'],
      ['-type=AAAA', 'dns.default.svc.cluster.local'],
    ]) {
      const { native, agent } = await servers(
        53,
        NODE_DNS,
        ['nslookup', '-debug', '-port={port}', ...query, dns],
        answerOnly,
      );
      expect(native, query.join(' ')).toEqual(agent);
      outputs.push(native);
    }
    expect(outputs[0]).toMatch(/internet address = 10\.96\.0\.10\n\s*ttl = 5\n/);
    expect(outputs[1]).toContain('NXDOMAIN');
    expect(outputs[2]).toContain('No answer');
  });

  it('answers every record of a name from a records file, read at each query, as the agent does', async () => {
    const dns = lab.address('pod/dns');
    const answerOnly = (out: string) => out.replace(/^(Server:|Address:\t|\s*id = ).*\n/gm, '');
    const lookup = (name: string) =>
      servers(FILE_DNS, NODE_FILE_DNS, ['nslookup', '-debug', '-port={port}', '-type=A', name, dns], answerOnly);
    const peers = await lookup('peers.default.svc.cluster.local');
    expect(peers.native).toEqual(peers.agent);
    expect(peers.native.match(/internet address = \S+/g)).toEqual([
      'internet address = 10.244.9.2',
      'internet address = 10.244.9.3',
    ]);
    const empty = await lookup('empty.default.svc.cluster.local');
    expect(empty.native).toEqual(empty.agent);
    expect(empty.native).toContain('No answer');
    // a record written after the servers started is answered at once
    await writeFile(recordsFile, 'peers.default.svc.cluster.local=10.244.9.4\n');
    const changed = await lookup('peers.default.svc.cluster.local');
    expect(changed.native).toEqual(changed.agent);
    expect(changed.native.match(/internet address = \S+/g)).toEqual(['internet address = 10.244.9.4']);
  });

  it('resolves as the agent does: an answer through the Service, NXDOMAIN, a fixed source port, no reply', async () => {
    for (const args of [
      ['--server=10.96.0.10', '--port=53', '--qname=dns.default.svc.cluster.local', '--timeout=1000'],
      ['--server=10.96.0.10', '--port=53', '--qname=nothing.default.svc.cluster.local', '--timeout=1000'],
      ['--server=10.96.0.10', '--port=53', '--qname=dns.default.svc.cluster.local', '--timeout=1000', '--sport=40000'],
      // nothing listens there: the port-unreachable never reaches an unconnected socket
      [`--server=${lab.address('pod/dns')}`, '--port=55', '--qname=dns.default.svc.cluster.local', '--timeout=300'],
    ]) {
      const { native, agent } = await agents(['dns-query', ...args]);
      expect(native, args.join(' ')).toEqual(agent);
    }
    expect(
      (
        await agents([
          'dns-query',
          '--server=10.96.0.10',
          '--port=53',
          '--qname=dns.default.svc.cluster.local',
          '--timeout=1000',
        ])
      ).native,
    ).toMatchObject({ outcome: 'ok', replies: [{ from: '10.96.0.10#53', rcode: 0, answers: ['10.96.0.10'] }] });
  });

  it('answers UDP and queries it as the agent does: the name and the client address seen, a fixed source port, no reply', async () => {
    const web = lab.address('pod/web');
    const client = lab.address('pod/client');
    // one source port for both clients: the same client address seen
    const query = (port: number, sport: number) =>
      agents(['udp-query', `--server=${web}`, `--port=${port}`, '--timeout=300', `--sport=${sport}`]);
    for (const [port, sport] of [
      [UDP_PORT, 40010],
      [NODE_UDP, 40011],
      [5002, 40012], // nothing listens there: the port-unreachable never reaches an unconnected socket
    ] as const) {
      const { native, agent } = await query(port, sport);
      expect(native, `port ${port}`).toEqual(agent);
    }
    const reply = (port: number, sport: number) => ({
      outcome: 'ok',
      server: `${web}#${port}`,
      replies: [
        {
          from: `${web}#${port}`,
          bytes: `web ${client}:${sport}\n`.length,
          servedBy: 'web',
          clientAddress: `${client}:${sport}`,
        },
      ],
    });
    expect((await query(UDP_PORT, 40013)).native).toEqual(reply(UDP_PORT, 40013));
    expect((await query(NODE_UDP, 40014)).native).toEqual(reply(NODE_UDP, 40014));
    expect((await query(5002, 40015)).native).toEqual({ outcome: 'timeout', server: `${web}#5002`, replies: [] });
    // without --sport: an ephemeral port, as the server saw it
    const { native } = await agents(['udp-query', `--server=${web}`, `--port=${UDP_PORT}`, '--timeout=300']);
    expect(native).toMatchObject({
      outcome: 'ok',
      replies: [{ clientAddress: expect.stringMatching(new RegExp(`^${client.replaceAll('.', '\\.')}:\\d+$`)) }],
    });
  });

  it('names the errno of a connect() as the agent does: connected, a closed port, an unreachable route, no answer', async () => {
    const web = lab.address('pod/web');
    const cases: [string[], string | null][] = [
      [[`--server=${web}`, '--port=8080'], null],
      [[`--server=${web}`, '--port=9'], 'ECONNREFUSED'],
      [[`--server=${UNREACHABLE}`, '--port=80'], 'EHOSTUNREACH'],
      // no pod has this address: neighbour resolution outlasts the timeout
      [['--server=10.244.1.200', '--port=80'], 'ETIMEDOUT'],
    ];
    for (const [args, errno] of cases) {
      const { native, agent } = await agents(['connect', ...args, '--timeout=300']);
      expect(native, args.join(' ')).toEqual(agent);
      expect(native).toEqual({ errno });
    }
  });
});
