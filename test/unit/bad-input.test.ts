// The bad-input corpus (test/bad-input/): every file must be refused by `netrepro validate` AND
// `netrepro run` with exit 2 and `FILE:LINE:COL: field:` naming the right line, and `run` must
// refuse before it creates anything (no lab namespace of its own ever appears).
// A case the harness gets wrong is an `it.fails` naming the bug, so the suite stays green and the
// bug stays visible; when the bug is fixed, vitest reports the `it.fails` as failing: turn it into
// a plain `it` then.
// Every file goes through the CLI's entry point (src/cli/build-cli.ts main, what bin/netrepro.js calls)
// in this process; real `node bin/netrepro.js` processes run `validate` over the whole corpus at
// once and `run` on one file per refusing layer (each process start costs a CLI start-up; 100+ of
// them would make this file take minutes on 2 cores). That the namespace watch used here does see a
// lab is shown in test/lab/namespace-watch.test.ts (this file builds no lab).
// Timings are reported (console table), never asserted: validation time is measured in-process
// with loadScenarioFile, since the CLI's own start-up would dominate.
import { runProcess } from '../child-process.ts';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScenarioValidationError } from '../../src/model/errors.ts';
import { loadScenarioFile } from '../../src/model/load-scenario.ts';
import { cliInProcess } from '../cli-in-process.ts';
import { namespacesCreatedDuring } from '../namespace-watch.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CORPUS = 'test/bad-input';

interface Case {
  /** File under test/bad-input/ (or a generated file, see below). */
  file: string;
  /** Acceptable lines: the line of the mistake, or the start of the construct it broke. */
  line: number | number[];
  /** Field path printed after FILE:LINE:COL (empty for problems of the whole document). */
  field: string;
  /** Part of the message. */
  message: string | RegExp;
  /** The harness gets this case wrong: the bug, for the lead. The test is `it.fails`. */
  bug?: string;
}

const cases: Case[] = [
  { file: '01-empty.yaml', line: 1, field: '', message: 'the file is empty' },
  { file: '02-comments-only.yaml', line: 1, field: '', message: 'the document must be a mapping (received nothing' },
  { file: '03-scalar.yaml', line: 1, field: '', message: 'the document must be a mapping (received a string' },
  { file: '04-list.yaml', line: 1, field: '', message: 'the document must be a mapping (received a list' },
  { file: '05-binary-garbage.yaml', line: 1, field: '', message: 'not a text file' },
  {
    file: '06-invalid-utf8.yaml',
    line: 2,
    field: '',
    message: 'not valid UTF-8',
  },
  { file: '07-alias-bomb.yaml', line: 1, field: '', message: 'Excessive alias count' },
  { file: '08-null-document.yaml', line: 1, field: '', message: 'the document must be a mapping (received nothing' },
  {
    file: '09-undefined-alias.yaml',
    line: 2,
    field: '',
    message: 'Unresolved alias',
  },
  {
    file: '10-yaml-unclosed-flow-mapping.yaml',
    line: 23,
    field: '',
    message: 'Flow map',
    bug: "an unclosed `{` on line 23 is reported at 24:1 (the yaml library's error position: where it noticed, not the `{` it could not close)",
  },
  { file: '11-yaml-bad-indentation.yaml', line: [7, 8], field: '', message: 'YAML:' },
  { file: '12-yaml-tab-indentation.yaml', line: 11, field: '', message: 'Tabs are not allowed as indentation' },
  { file: '13-yaml-duplicate-key.yaml', line: 9, field: '', message: 'Map keys must be unique' },
  { file: '14-yaml-two-documents.yaml', line: 38, field: '', message: 'multiple documents' },
  {
    file: '15-unknown-top-level-key.yaml',
    line: 32,
    field: 'fixs',
    message: 'unknown key fixs',
  },
  { file: '16-unknown-probe-key.yaml', line: 23, field: 'probes[0].retries', message: 'unknown key retries' },
  {
    file: '17-wrong-type-port-string.yaml',
    line: 23,
    field: 'probes[0].http.port',
    message: 'wrong type (received "80", expected number)',
  },
  {
    file: '18-wrong-type-nodes-mapping.yaml',
    line: 7,
    field: 'topology.nodes',
    message: 'wrong type (received a mapping, expected array)',
  },
  {
    file: '19-wrong-type-enabled-string.yaml',
    line: 29,
    field: 'fault.steps[0].br-netfilter.enabled',
    message: 'expected boolean',
  },
  { file: '20-missing-required-fixes.yaml', line: [1, 2], field: 'fixes', message: 'required field is missing' },
  {
    file: '21-unknown-endpoint-pod.yaml',
    line: 19,
    field: 'topology.services[0].endpoints[0]',
    message: 'unknown pod (received wbe',
  },
  {
    file: '22-unknown-pod-node.yaml',
    line: 13,
    field: 'topology.pods[1].node',
    message: 'unknown node (received node-b',
  },
  { file: '23-unknown-probe-in-expect.yaml', line: 32, field: 'fault.expect.pod-ip', message: 'unknown probe' },
  {
    file: '24-unknown-service-in-probe.yaml',
    line: 23,
    field: 'probes[0].http.to',
    message: 'unknown svc (received api',
  },
  {
    file: '25-unknown-step-node.yaml',
    line: 29,
    field: 'fault.steps[0].br-netfilter.node',
    message: 'unknown node (received node-z',
  },
  { file: '26-invalid-cidr-prefix.yaml', line: 8, field: 'topology.nodes[0].podCIDR', message: 'IPv4 CIDR' },
  { file: '27-invalid-cidr-octet.yaml', line: 8, field: 'topology.nodes[0].podCIDR', message: 'IPv4 CIDR' },
  { file: '28-invalid-cluster-ip.yaml', line: 17, field: 'topology.services[0].clusterIP', message: 'IPv4 address' },
  { file: '29-port-out-of-range.yaml', line: 18, field: 'topology.services[0].ports[0].port', message: '65535' },
  { file: '30-port-zero.yaml', line: 18, field: 'topology.services[0].ports[0].targetPort', message: '(received 0)' },
  { file: '31-port-negative-probe.yaml', line: 23, field: 'probes[0].http.port', message: '(received -80)' },
  {
    file: '32-duplicate-pod-names.yaml',
    line: 12,
    field: 'topology.pods[1].name',
    message: 'duplicate name (received client',
  },
  { file: '33-duplicate-probe-ids.yaml', line: 24, field: 'probes[1].id', message: 'duplicate id (received clusterip' },
  {
    file: '34-duplicate-node-names.yaml',
    line: 9,
    field: 'topology.nodes[1].name',
    message: 'duplicate name (received node-a',
  },
  { file: '35-shell-pod-name.yaml', line: 12, field: 'topology.pods[1].name', message: 'received "web; rm -rf /"' },
  { file: '36-shell-node-name.yaml', line: 7, field: 'topology.nodes[0].name', message: 'received "node-a$(reboot)"' },
  { file: '37-shell-probe-id.yaml', line: 21, field: 'probes[0].id', message: 'received "clusterip`id`"' },
  {
    file: '38-shell-run-on.yaml',
    line: 29,
    field: 'fault.steps[0].run.on',
    message: 'received "node/node-a; iptables -F"',
  },
  { file: '39-shell-expect-key.yaml', line: 26, field: 'baseline.expect.clusterip|sh', message: 'Invalid key' },
  {
    file: '40-run-on-unknown-pod.yaml',
    line: 29,
    field: 'fault.steps[0].run.on',
    message: 'unknown pod (received ghost',
  },
  {
    file: '61-unknown-namespace-placeholder.yaml',
    line: 36,
    field: 'fault.checks[0].counter',
    message: 'unknown namespace in {ns/prod} (received prod, expected one of: default)',
  },
  {
    file: '41-cluster-ip-in-pod-cidr.yaml',
    line: 17,
    field: 'topology.services[0].clusterIP',
    message: 'must not be inside the pod network',
  },
  {
    file: '42-pod-cidr-outside-cluster-cidr.yaml',
    line: 8,
    field: 'topology.nodes[0].podCIDR',
    message: 'not inside clusterCIDR',
  },
  { file: '43-unknown-outcome.yaml', line: 31, field: 'fault.expect.clusterip', message: 'received "hangs"' },
  { file: '44-unknown-cni.yaml', line: 5, field: 'topology.cni', message: 'received "calico"' },
  {
    file: '45-sysctl-outside-net.yaml',
    line: 9,
    field: 'topology.nodes[0].sysctls.kernel.panic',
    message: 'Invalid key',
  },
  { file: '46-probe-two-kinds.yaml', line: 21, field: 'probes[0]', message: 'exactly one kind' },
  { file: '47-step-two-actions.yaml', line: 29, field: 'fault.steps[0]', message: 'exactly one action' },
  {
    file: '48-duplicate-cluster-ip.yaml',
    line: 21,
    field: 'topology.services[1].clusterIP',
    message: 'duplicate clusterIP',
  },
  { file: '49-http-path-with-space.yaml', line: 23, field: 'probes[0].http.path', message: 'absolute URL path' },
  { file: '50-bad-duration.yaml', line: 23, field: 'probes[0].timeout', message: 'duration' },
  {
    file: '51-overlapping-pod-cidrs.yaml',
    line: 10,
    field: 'topology.nodes[1].podCIDR',
    message: /overlap|duplicate/,
  },
  {
    file: '52-cluster-cidr-overlaps-fabric.yaml',
    line: [6, 9],
    field: 'topology.',
    message: /172\.18\.0/,
  },
  {
    file: '53-client-address-on-dns-probe.yaml',
    line: 29,
    field: 'baseline.expect.lookup.clientAddress',
    message: "reported by the pod agent's HTTP and UDP servers only",
  },
  {
    file: '54-client-address-without-answer.yaml',
    line: 34,
    field: 'fault.expect.echo.clientAddress',
    message: 'can never hold: only an answer reports the address the server saw',
  },
  {
    file: '55-client-address-unknown-host.yaml',
    line: 26,
    field: 'baseline.expect.clusterip.clientAddress',
    message: 'unknown host',
  },
  {
    file: '56-udp-probe-without-port.yaml',
    line: 23,
    field: 'probes[0].udp.port',
    message: 'required field is missing',
  },
  {
    file: '57-hostport-taken-twice.yaml',
    line: 19,
    field: 'topology.pods[1].hostPorts[0].hostPort',
    message: 'pod web already holds 8080/TCP on node node-a',
  },
  {
    file: '58-cni-chain-pod-on-other-node.yaml',
    line: 27,
    field: 'fault.steps[0].cni-chain.recreate[0]',
    message: 'pod web runs on node node-b, not on node-a',
  },
  { file: '59-cni-chain-portmap-first.yaml', line: 9, field: 'topology.nodes[0].cniChain', message: 'bridge first' },
  {
    file: '62-hostip-of-another-node.yaml',
    line: 17,
    field: 'topology.pods[0].hostPorts[0].hostIP',
    message: "node-b is not pod web's node (node-a)",
  },
  {
    file: '63-hostip-not-an-address-of-the-node.yaml',
    line: 15,
    field: 'topology.pods[0].hostPorts[0].hostIP',
    message: 'not an address of node node-a',
  },
  {
    file: '64-hostport-taken-on-every-address.yaml',
    line: 20,
    field: 'topology.pods[1].hostPorts[0].hostPort',
    message: 'pod web already holds 8080/TCP on node node-a (on every address of the node: it has no hostIP)',
  },
  {
    file: '65-control-on-the-symptom.yaml',
    line: 34,
    field: 'fault.checks[0].control',
    message: 'a control holds with or without the fault, but the baseline reads the same with another bound',
  },
  {
    file: '66-outcome-list-with-ok.yaml',
    line: 31,
    field: 'fault.expect.clusterip.outcome',
    message: 'a list of outcomes names failures only',
  },
  {
    file: '67-fix-asserts-what-the-fault-omits.yaml',
    line: 31,
    field: 'fixes[0].expect.nodeport.clientAddress',
    message: 'which the faulted phase does not assert although it expects the same outcome',
  },
  {
    file: '68-health-check-port-with-cluster-policy.yaml',
    line: 19,
    field: 'topology.services[0].healthCheckNodePort',
    message: 'healthCheckNodePort is set on a LoadBalancer service with externalTrafficPolicy Local, and on no other',
  },
  {
    file: '69-source-ranges-on-a-nodeport.yaml',
    line: 18,
    field: 'topology.services[0].loadBalancerSourceRanges',
    message: 'loadBalancerSourceRanges needs type: LoadBalancer',
  },
  {
    file: '70-lb-address-of-a-clusterip-service.yaml',
    line: 20,
    field: 'probes[0].http.to',
    message: 'unknown LoadBalancer Service',
  },
  {
    file: '71-probe-from-a-deleted-pod.yaml',
    line: 31,
    field: 'fault.expect.clusterip',
    message: 'pod client is deleted by an earlier delete step: probe clusterip cannot be sent from it',
  },
  {
    file: '60-hostports-on-cilium.yaml',
    line: 15,
    field: 'topology.pods[0].hostPorts',
    message: 'the cilium shape has not',
  },
];

/** Generated into a temporary directory instead of being committed. */
const generated: (Case & { content: () => string | Buffer })[] = [
  {
    file: 'multi-megabyte.yaml',
    line: 1,
    field: '',
    message: 'file too large',
    // a well-formed scenario padded with a 3 MiB description
    content: () =>
      readFileSync(join(ROOT, CORPUS, '20-missing-required-fixes.yaml'), 'utf8').replace(
        'title:',
        `description: "${'x'.repeat(3 * 1024 * 1024)}"\ntitle:`,
      ),
  },
  {
    file: 'deep-nesting.yaml',
    line: 1,
    field: '',
    message: 'nested deeper than 64 levels',
    // 20 000 nested flow sequences (40 KB): refused before the parser recurses per level
    content: () => `id: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`,
  },
];

/** The CLI as a process: `node bin/netrepro.js ARGS`. */
async function cliProcess(args: string[]) {
  const child = runProcess('node', ['bin/netrepro.js', ...args], { cwd: ROOT, timeout: 120_000 });
  const r = await child;
  return { exitCode: r.exitCode, stderr: stripAnsi(String(r.stderr)), pid: child.pid };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes start with ESC
const stripAnsi = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

const timings: { case: string; loadMs: number; validateMs?: number; runMs?: number; processMs?: number }[] = [];

async function inProcess(file: string): Promise<{ issues: string[]; ms: number; accepted: boolean }> {
  const started = performance.now();
  try {
    await loadScenarioFile(file);
    return { issues: [], ms: performance.now() - started, accepted: true };
  } catch (e) {
    const ms = performance.now() - started;
    if (e instanceof ScenarioValidationError) return { issues: e.message.split('\n'), ms, accepted: false };
    throw e;
  }
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function expectRejected(output: string, file: string, c: Case): void {
  const lines = Array.isArray(c.line) ? c.line : [c.line];
  const field = c.field ? ` ${escapeRegex(c.field)}` : '';
  // FILE:LINE:COL: field ...message
  const where = new RegExp(`${escapeRegex(file)}:(${lines.join('|')}):\\d+:${field}`);
  const issue = output
    .split('\n')
    .find((l) => where.test(l) && (typeof c.message === 'string' ? l.includes(c.message) : c.message.test(l)));
  expect(issue, `no issue at ${file}:${lines.join(' or ')}${field} matching ${c.message} in:\n${output}`).toBeDefined();
}

let tmp: string;
const all = [
  ...cases.map((c) => ({ ...c, path: join(CORPUS, c.file) })),
  ...generated.map((g) => ({ ...g, path: '' })),
];
const pathOf = (c: (typeof all)[number]) => c.path || relative(ROOT, join(tmp, c.file));
/**
 * Also run as real processes (`node bin/netrepro.js run FILE`), one file per layer that refuses it
 * (the document, the schema, a cross-reference): every file already goes through the same entry point
 * in this process, so a process adds only the binary's own boundary (exit code, stderr, its own pid
 * owning no namespace), and each one costs a CLI start-up.
 */
const AS_PROCESS = ['01-empty.yaml', '17-wrong-type-port-string.yaml', '41-cluster-ip-in-pod-cidr.yaml'];

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'netrepro-bad-input-'));
  for (const g of generated) await writeFile(join(tmp, g.file), g.content());
  await loadScenarioFile(join(ROOT, 'scenarios/br-netfilter-clusterip-same-node.yaml')); // warm up (module JIT) before timing
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
  timings.sort((a, b) => a.case.localeCompare(b.case));
  const ms = (n?: number) => (n === undefined ? '' : n.toFixed(1));
  console.table(
    timings.map((t) => ({
      case: t.case,
      'loadScenarioFile ms': ms(t.loadMs),
      'main validate ms': ms(t.validateMs),
      'main run ms': ms(t.runMs),
      'process run ms': ms(t.processMs),
    })),
  );
});

describe('bad-input corpus', () => {
  it('covers every file in test/bad-input/ (and only those)', async () => {
    expect((await readdir(join(ROOT, CORPUS))).filter((f) => f.endsWith('.yaml')).sort()).toEqual(
      cases.map((c) => c.file).sort(),
    );
    expect(all.length).toBeGreaterThanOrEqual(25);
  });

  // `validate FILE` and `run FILE` through the CLI's entry point (src/cli/build-cli.ts main: commander,
  // error formatting, exit-code mapping) in this process, one file at a time.
  describe('each file is refused by validate and run: exit 2, FILE:LINE:COL: field, before any lab exists', () => {
    for (const c of all) {
      (c.bug ? it.fails : it)(`${c.file}${c.bug ? ` [BUG: ${c.bug}]` : ''}`, async () => {
        const file = pathOf(c);
        const timing: (typeof timings)[number] = { case: c.file, loadMs: 0 };
        timings.push(timing);

        const direct = await inProcess(join(ROOT, file));
        timing.loadMs = direct.ms;
        expect(direct.accepted, `${file} was accepted by loadScenarioFile`).toBe(false);
        expectRejected(direct.issues.join('\n'), join(ROOT, file), c);

        const cwd = process.cwd();
        process.chdir(ROOT);
        try {
          let t = performance.now();
          const validate = await cliInProcess(['validate', file]);
          timing.validateMs = performance.now() - t;
          expect(validate.exitCode, validate.stderr).toBe(2);
          expectRejected(validate.stderr, file, c);
          expect(validate.stderr).not.toContain('internal error');

          t = performance.now();
          const { value: run, created } = await namespacesCreatedDuring(() => cliInProcess(['run', file]));
          timing.runMs = performance.now() - t;
          expect(run.exitCode, run.stderr).toBe(2);
          expectRejected(run.stderr, file, c);
          // namespaces of other test files' labs may appear meanwhile; none may belong to this process
          expect(created.filter((n) => n.ownerPid === run.pid)).toEqual([]);
        } finally {
          process.chdir(cwd);
        }
      });
    }
  });

  describe('as real processes (node bin/netrepro.js)', () => {
    it('validate with every corpus file at once: exit 2, each file named at its line', async () => {
      const files = all.filter((c) => !c.bug).map(pathOf);
      const r = await cliProcess(['validate', ...files]);
      expect(r.exitCode, r.stderr).toBe(2);
      for (const c of all.filter((x) => !x.bug)) expectRejected(r.stderr, pathOf(c), c);
    });

    it.concurrent.each(AS_PROCESS)('run %s: exit 2 with the location, no namespace of its own', async (name) => {
      const c = all.find((x) => x.file === name)!;
      const t = performance.now();
      const { value: run, created } = await namespacesCreatedDuring(() => cliProcess(['run', pathOf(c)]));
      const timing = timings.find((x) => x.case === name);
      if (timing) timing.processMs = performance.now() - t;
      expect(run.exitCode, run.stderr).toBe(2);
      expectRejected(run.stderr, pathOf(c), c);
      expect(created.filter((n) => n.ownerPid === run.pid)).toEqual([]);
    });

    it('several deeply nested files in one validate call: exit 2, not a V8 abort (nesting is refused before parsing; it once aborted node with "FATAL ERROR: RegExpCompiler Allocation failed")', async () => {
      const deep = (n: number) => `id: ${'['.repeat(n)}${']'.repeat(n)}\n`;
      await writeFile(join(tmp, 'deep-5000.yaml'), deep(5000));
      await writeFile(join(tmp, 'deep-60000.yaml'), deep(60_000));
      const r = await cliProcess([
        'validate',
        join(tmp, 'deep-5000.yaml'),
        join(tmp, 'deep-5000.yaml'),
        join(tmp, 'deep-60000.yaml'),
      ]);
      expect(r.stderr).not.toContain('FATAL ERROR');
      expect(r.exitCode).toBe(2);
    });
  });
});
