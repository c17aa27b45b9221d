// The contract of the JSON reports: the run report (`run --json FILE`) and the gate report
// (`gate --json FILE`). The single source of truth: docs/schemas/*.schema.json are generated from
// these (`npm run schema`), the reporters' return types are inferred from them, and a unit test
// checks reports built by the real reporter code against them. docs/report-format.md explains them.
//
// Objects are open (unknown keys allowed) so that a consumer holding this schema keeps working when
// a later netrepro adds an optional field; additive changes keep `version: 1`, anything else bumps it.
import { z } from 'zod';
import { OUTCOMES } from '../model/outcome.ts';
import { jsonSchemaOf } from '../model/json-schema.ts';

export const REPORT_VERSION = 1;

export const ReportMeta = z
  .object({
    netrepro: z.string().describe('netrepro version that wrote the report (package.json `version`)'),
    node: z.string().describe('Node.js version it ran on (`process.version`, e.g. v20.19.5)'),
    kernel: z.string().describe('kernel release of the machine that ran it (`uname -r`)'),
    platform: z.string().describe('`process.platform`, e.g. linux'),
    arch: z.string().describe('`process.arch`, e.g. x64'),
    startedAt: z.iso.datetime({ offset: true }).describe('when the run started, ISO 8601 UTC'),
  })
  .describe('who wrote the report, where and when');

const ErrorInfo = z
  .object({
    code: z.string().describe('stable error code (src/model/errors.ts), e.g. LAB_FAILED, COMMAND_FAILED'),
    message: z.string(),
    hint: z.string().optional().describe('what to do about it'),
  })
  .describe('why something errored');

const Step = z
  .object({
    on: z.string().describe('target: node/NAME, pod/NAME, host/NAME or fabric'),
    argv: z.array(z.string()).describe('the command, or a lab action as words (`start kube-proxy`)'),
    durationMs: z.number(),
    exit: z
      .union([z.number(), z.string()])
      .optional()
      .describe('exit status (0 for a lab action that completed), or why there is none'),
    output: z.string().optional().describe('its output (stdout then stderr), tail'),
    evidence: z.string().optional().describe('what proved the step fired: a line it printed, a value read back'),
    background: z.boolean().optional().describe('ran alongside the probes'),
  })
  .describe('a fault or fix step as it ran');

const ProbeDetail = z
  .object({
    servedBy: z.string().optional().describe('pod that answered, when the server names itself'),
    clientAddress: z
      .string()
      .optional()
      .describe(
        'address:port the server saw the request come from, as it reported it (HTTP and UDP servers of the pod agent)',
      ),
    source: z.string().optional().describe('address:port the answer came from'),
    connected: z.boolean().optional().describe('TCP: whether the handshake completed'),
    sentTo: z.string().optional().describe("TCP: where the client's SYN really went"),
    answers: z.array(z.string()).optional().describe('DNS: addresses in the answer section'),
  })
  .catchall(z.unknown())
  .describe(
    'what backs the outcome: exit codes, packets (`packets`), distributions of repeated probes (`distribution`); free-form beyond the named keys',
  );

const TracePacketFields = {
  proto: z.string(),
  src: z.string(),
  dst: z.string(),
  sport: z.number().optional(),
  dport: z.number().optional(),
  flags: z.string().optional().describe('TCP flags as words: `SYN ACK`'),
};
const TracePacket = z
  .object({
    ...TracePacketFields,
    icmp: z
      .object({
        type: z.number(),
        code: z.number(),
        mtu: z.number().optional().describe('fragmentation needed: the next hop MTU'),
      })
      .optional()
      .describe('ICMP type and code'),
    inner: z
      .object(TracePacketFields)
      .optional()
      .describe("an ICMP error's quoted header: the packet the error is about"),
  })
  .describe('a packet as the trace saw it');

const PathStep = z
  .object({
    at: z.number().describe('ms since the trace started'),
    where: z.string().describe('pod/NAME, node/NAME, host/NAME, fabric or bridge'),
    hook: z.string().describe('the interface, netfilter hook, conntrack, kernel function or BPF program'),
    packet: z.string(),
    action: z.string().describe('sent, received, a rewrite, a verdict, a conntrack state, a drop reason'),
    kind: z
      .enum(['send', 'receive', 'netfilter', 'conntrack', 'drop', 'reject', 'bpf', 'bridge'])
      .describe('reject: a rule that answered the packet (RST or ICMP) instead of passing it'),
    culprit: z.boolean().optional(),
    inferred: z.boolean().optional().describe("deduced from the other steps and the lab's facts, not traced"),
  })
  .describe('one hop of the packet path');

const Diagnosis = z
  .object({
    culprit: z
      .object({
        kind: z.enum(['rule', 'bpf-program', 'kernel', 'socket', 'conntrack']),
        node: z.string().describe('where: a node name, or pod/NAME for a socket'),
        where: z.string().describe('table/chain, program and attach point, kernel path, or socket'),
        text: z.string().describe("the rule text, the program and its rewrite, the kernel's words, the drop reason"),
      })
      .describe('what dropped, rejected or rewrote the packet'),
    packet: TracePacket,
    reason: z.string().describe('a few plain sentences: what happened to which packet, and why'),
    evidence: z
      .array(
        z.object({
          where: z.string().describe('node/NAME, pod/NAME, host/NAME or fabric'),
          command: z.string().describe('the read-only command that printed it'),
          output: z.string(),
        }),
      )
      .optional()
      .describe(
        'the kernel state behind the culprit, as read: the rp_filter values and the route back, the conntrack entry of a NAT',
      ),
    path: z.array(PathStep),
  })
  .describe('why a faulted or failing probe ended as it did, from its packet trace (src/observe/trace/diagnosis.ts)');

const ProbeTrace = z
  .object({
    startedAt: z.number().optional().describe('wall clock (epoch ms) at `at` = 0'),
    flows: z
      .object({ clientPod: z.string(), client: z.string(), target: z.object({ ip: z.string(), port: z.number() }) })
      .optional(),
    events: z
      .array(z.looseObject({ kind: z.enum(['rule', 'drop', 'conntrack']), at: z.number() }))
      .describe('netfilter verdicts with rule text, kernel drops with reasons, conntrack events'),
    facts: z.array(z.looseObject({ kind: z.string() })).describe('settings and BPF programs the path depended on'),
    unavailable: z.array(z.string()).describe('parts of the trace that could not run here, and why'),
    costMs: z.object({ lab: z.number().optional(), start: z.number(), stop: z.number(), facts: z.number().optional() }),
  })
  .describe('the packet trace of a faulted or failing probe');

const Probe = z
  .object({
    id: z.string(),
    expected: z.string().describe('the expectation, as text'),
    observed: z.enum(OUTCOMES).describe('the outcome class observed'),
    matched: z.boolean(),
    mismatch: z.string().optional().describe('why the observation did not meet the expectation'),
    summary: z.string().describe('one line a person reads'),
    durationMs: z.number(),
    detail: ProbeDetail,
    diagnosis: Diagnosis.optional().describe('what the evidence says went wrong, when it can tell'),
    trace: ProbeTrace.optional(),
    traceCostMs: z.number().optional().describe('what tracing added to this probe, ms'),
  })
  .describe('one probe in one phase');

const Check = z
  .object({
    id: z.string(),
    on: z.string(),
    argv: z.array(z.string()),
    expected: z.string(),
    observed: z.string(),
    matched: z.boolean(),
    evidence: z.array(z.string()).describe('the output lines the check matched'),
    unreadable: z
      .literal(true)
      .optional()
      .describe(
        'the command failed or its counter matched nothing: the check says nothing either way (the gate calls such a scenario unjudged)',
      ),
    value: z.number().optional().describe("the number read: the counter's change, or the count of matching lines"),
    reported: z
      .literal(true)
      .optional()
      .describe('reported, not asserted (`report: true`): `matched` is false only when the check could not be read'),
  })
  .describe('an evidence check (a counter delta or a count of matching lines)');

const Phase = z
  .object({
    name: z.enum(['baseline', 'faulted', 'fixed']),
    variant: z.string().describe('the fix variant whose lab ran this phase'),
    title: z.string().optional(),
    steps: z.array(Step),
    probes: z.array(Probe),
    checks: z.array(Check),
    durationMs: z.number(),
    status: z
      .enum(['passed', 'failed', 'errored'])
      .describe('errored: a step failed or the lab broke, nothing after it was judged'),
    error: ErrorInfo.optional(),
  })
  .describe('one phase of one lab');

export const VERDICTS = ['passed', 'measured', 'failed', 'errored', 'skipped'] as const;

export const ScenarioReportSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    file: z.string().describe('the scenario file, as given to the run'),
    verdict: z
      .enum(VERDICTS)
      .describe('measured: a `purpose: measure` scenario whose assertions held; it reports numbers and does not pass'),
    durationMs: z.number(),
    phases: z.array(Phase),
    labs: z
      .array(z.object({ variant: z.string(), runId: z.string(), provisionMs: z.number(), teardownMs: z.number() }))
      .describe('one lab per fix variant, with its set-up and teardown times'),
    evidenceDir: z.string().optional().describe('where captures and rule snapshots were written (--report-dir)'),
    error: ErrorInfo.optional(),
    skipReason: z.string().optional(),
    skippedFixes: z
      .array(z.object({ fix: z.string(), reason: z.string() }))
      .optional()
      .describe('fix variants this provider cannot run, left out with the reason; the other variants ran'),
    measurements: z.array(z.string()).optional().describe('purpose: measure: the numbers the run measured'),
    addresses: z
      .record(z.string(), z.string())
      .optional()
      .describe(
        'every address a reference resolved to in the run (pod/web -> 10.244.1.3), so expectations can be judged again without the lab',
      ),
    log: z.array(z.string()).describe('lab log lines'),
  })
  .describe('one scenario');

export const RunReportSchema = z
  .object({
    version: z.literal(REPORT_VERSION).describe('report format version'),
    meta: ReportMeta,
    provider: z.string().describe('netns, kind, minikube or k3s'),
    durationMs: z.number(),
    summary: z
      .object(
        Object.fromEntries(VERDICTS.map((v) => [v, z.number().int().min(0)])) as Record<
          (typeof VERDICTS)[number],
          z.ZodNumber
        >,
      )
      .describe('scenarios per verdict'),
    scenarios: z.array(ScenarioReportSchema),
  })
  .meta({
    title: 'netrepro run report',
    description: 'written by `netrepro run --json FILE`; see docs/report-format.md',
  });

const Susceptibility = z
  .enum(['susceptible', 'immune', 'broken', 'not-applicable', 'unjudged'])
  .describe(
    "susceptible: every faulted expectation held (the symptom showed); immune: every symptom probe observed a healthy outcome (the baseline's or a fix's) and every control held; broken: neither (a control broke, a third outcome, the symptom without its mechanism); not-applicable: nothing to judge (skipped, a measurement); unjudged: the run should have told and could not (a step did not fire, the baseline did not hold, evidence unreadable)",
  );

export const GateReportSchema = z
  .object({
    version: z.literal(REPORT_VERSION).describe('report format version'),
    meta: ReportMeta,
    baseline: z.string().describe('baseline profile name'),
    candidate: z.string().describe('candidate profile name'),
    durationMs: z.number(),
    scenarios: z.array(
      z.object({
        id: z.string(),
        baseline: Susceptibility,
        candidate: Susceptibility,
        change: z
          .enum(['regression', 'improvement', 'unchanged', 'unjudged'])
          .describe(
            'regression: immune under the baseline and susceptible under the candidate, or the candidate broken; improvement: the reverse; unjudged: either side could not be judged, or both are broken',
          ),
        baselineReason: z.string(),
        candidateReason: z.string(),
        baselineDecidedBy: z
          .array(z.string())
          .describe('the probe ids (and `check ID`s) whose results decided the baseline side'),
        candidateDecidedBy: z.array(z.string()).describe('the same for the candidate side'),
      }),
    ),
  })
  .meta({
    title: 'netrepro gate report',
    description: 'written by `netrepro gate --json FILE`; see docs/report-format.md',
  });

export type ReportMetaData = z.infer<typeof ReportMeta>;
export type RunReport = z.infer<typeof RunReportSchema>;
export type GateReport = z.infer<typeof GateReportSchema>;

/** The JSON Schemas, as `npm run schema` writes them to docs/schemas/. */
export function reportJsonSchemas(): Record<string, unknown> {
  const toJson = (schema: z.ZodType) => jsonSchemaOf(schema);
  return { 'run-report.schema.json': toJson(RunReportSchema), 'gate-report.schema.json': toJson(GateReportSchema) };
}
