// --html FILE (and report.html in --report-dir): one self-contained page per run. Per scenario the
// incident (title, mechanism, write-up, sources), the cluster as a picture, the command that reproduces
// it and the phase verdicts with their checks and captures; per faulted or failing probe its diagnosis
// and a sequence diagram of the packet path: one lane per pod/node (the client's lane named after it),
// one row per hop in time order (netfilter verdicts and rewrites, conntrack, BPF programs, the bridge,
// drops and rejects), the culprit in red, deduced hops dashed, every label whole in its tooltip.
// No script, no external file: the write-ups are inlined, and the captures are linked relatively from beside
// the page (copied there when the evidence lies elsewhere), so the page works wherever its folder is moved.
import { cp, readFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { PhaseResult, ProbeResult, RunResult, ScenarioResult } from '../engine/run/results.ts';
import type { PathStep } from '../model/diagnosis.ts';
import type { TopologySpec } from '../model/scenario-schema.ts';
import { diagnosisLines, evidenceLines } from './diagnosis-lines.ts';
import type { ReportContext, ScenarioFacts } from './report-context.ts';
import { defaultInvocation, type Invocation, reproduceCommand } from './reproduce-command.ts';
import type { Reporter } from './reporter.ts';
import { writeReport } from './write-report.ts';

export function htmlReporter(file: string, context?: ReportContext): Reporter {
  return {
    async onRunEnd(result) {
      const stdout = file === '-';
      const dir = stdout ? undefined : dirname(resolve(file));
      const page: PageFiles = { dir, writeups: await writeups(context) };
      if (dir) page.evidence = await evidenceBeside(result, dir, `${basename(file)}.evidence`);
      await writeReport('HTML report', file, renderHtml(result, context, page));
    },
  };
}

/** What the page links or inlines beyond the results. */
export interface PageFiles {
  /** The page's folder: capture links are relative to it. */
  dir?: string;
  /** Each scenario's evidence as the page links it, where it differs from where the run wrote it. */
  evidence?: Map<string, string>;
  /** Each scenario's write-up text, by scenario id. */
  writeups?: Map<string, string>;
}

/** The write-ups the scenarios name, read from where their file says. */
async function writeups(context: ReportContext | undefined): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const [id, facts] of context?.scenarios ?? []) {
    const text = facts.incidentFile && (await readFile(facts.incidentFile, 'utf8').catch(() => undefined));
    if (text) texts.set(id, text);
  }
  return texts;
}

/** Evidence outside the page's folder, copied beside the page so that a moved folder keeps every link. */
async function evidenceBeside(result: RunResult, dir: string, folder: string): Promise<Map<string, string>> {
  const moved = new Map<string, string>();
  for (const s of result.scenarios) {
    if (!s.evidenceDir || s.evidenceDir === dir || s.evidenceDir.startsWith(dir + sep)) continue;
    const copy = join(dir, folder, s.id);
    await cp(s.evidenceDir, copy, { recursive: true }).then(
      () => moved.set(s.id, copy),
      () => undefined, // nothing written there (no lab came up): the page links nothing
    );
  }
  return moved;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const held = (p: PhaseResult) => p.probes.every((x) => x.matched) && p.checks.every((c) => c.matched);

const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fff}
h1{font-size:20px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 4px} h3{font-size:14px;margin:18px 0 6px}
.dim{color:#667} .ok{color:#137333} .bad{color:#b3261e} code{font:12px ui-monospace,monospace;background:#f3f4f7;padding:1px 4px;border-radius:3px}
table{border-collapse:collapse;margin:6px 0} td,th{border:1px solid #dde;padding:3px 8px;text-align:left;font-size:13px;vertical-align:top}
th{background:#f3f4f7} .incident{max-width:1100px;margin:4px 0} .repro{margin:6px 0}
.culprit{border-left:4px solid #b3261e;background:#fdf0ef;padding:8px 12px;margin:8px 0;max-width:1100px}
.culprit b{color:#b3261e} .probe{margin:10px 0 26px} svg{display:block;margin:8px 0;max-width:100%}
.writeup{font:12px ui-monospace,monospace;white-space:pre-wrap;background:#f7f7fa;padding:6px 8px;max-height:480px;overflow:auto}
.culprit pre{font:12px ui-monospace,monospace;background:#f3f4f7;padding:6px 8px;margin:6px 0 0;white-space:pre-wrap}
`;

export function renderHtml(result: RunResult, context?: ReportContext, page: PageFiles = {}): string {
  const { passed, measured, failed, errored, skipped } = result.summary;
  const invocation = context?.invocation ?? defaultInvocation();
  const versions = context
    ? ` · netrepro ${esc(context.netrepro)}, Node ${esc(context.node)}, kernel ${esc(context.kernel)}`
    : '';
  const body = [
    `<h1>netrepro run</h1>`,
    `<div class="dim">provider ${esc(result.provider)} · ${(result.durationMs / 1000).toFixed(2)} s · ${passed} passed${measured ? `, ${measured} measured` : ''}, ${failed} failed${errored ? `, ${errored} errored` : ''}, ${skipped} skipped${versions}</div>`,
    // an index once the page holds more than a screen of scenarios
    result.scenarios.length > 3
      ? `<nav class="dim">${result.scenarios.map((s) => `<a href="#${esc(s.id)}">${esc(s.id)}</a> ${s.verdict}`).join(' · ')}</nav>`
      : '',
    ...result.scenarios.map((s) => scenarioSection(s, result.provider, context?.scenarios.get(s.id), invocation, page)),
  ];
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>netrepro report</title><style>${CSS}</style></head><body>${body.join('\n')}</body></html>\n`;
}

/** The incident as the scenario file tells it: the mechanism, the write-up and the sources, linked. */
function incident(facts: ScenarioFacts | undefined, writeup: string | undefined): string {
  if (!facts) return '';
  const links = (facts.sources ?? []).map((u) => `<a href="${esc(u)}">${esc(u)}</a>`);
  // the write-up inlined, so that it travels with the page; its path where it could not be read
  const story = writeup
    ? `<details class="incident"><summary>write-up (${esc(facts.incident ?? '')})</summary><pre class="writeup">${esc(writeup)}</pre></details>`
    : facts.incident
      ? `<div class="incident dim">write-up: ${esc(facts.incident)}</div>`
      : '';
  return [
    facts.description ? `<div class="incident">${esc(facts.description)}</div>` : '',
    story,
    links.length ? `<div class="incident dim">${links.join(' · ')}</div>` : '',
    `<div class="dim">${esc(facts.cni)} · ${esc(facts.profile)} · ${esc(facts.file)}</div>`,
  ].join('\n');
}

/** The command that runs this scenario again the same way. */
function reproduce(s: ScenarioResult, provider: string, facts: ScenarioFacts | undefined, invocation: Invocation) {
  const command = reproduceCommand(s.id, provider, facts, invocation);
  return `<div class="repro">reproduce: <code>${esc(command)}</code></div>`;
}

function scenarioSection(
  s: ScenarioResult,
  provider: string,
  facts: ScenarioFacts | undefined,
  invocation: Invocation,
  page: PageFiles,
): string {
  const verdict = `<span class="${s.verdict === 'passed' ? 'ok' : s.verdict === 'skipped' ? 'dim' : 'bad'}">${s.verdict}</span>`;
  const rows = s.phases.map(
    (p) =>
      `<tr><td>${esc(p.variant)}</td><td>${p.name}</td><td class="${held(p) ? 'ok' : 'bad'}">${held(p) ? 'held' : 'did not hold'}</td><td>${p.probes
        .map(
          (x) =>
            `${x.matched ? '✓' : '✗'} ${esc(x.id)}: ${esc(x.observed)} <span class="dim">(expects ${esc(x.expected)}, ${x.durationMs} ms)</span>`,
        )
        .join('<br>')}</td><td>${checkCell(p)}</td><td>${captureCell(s, p, page)}</td></tr>`,
  );
  const probes = s.phases.flatMap((p) =>
    p.probes.filter((x) => x.diagnosis || (x.trace && !x.matched)).map((x) => probeSection(p, x)),
  );
  return [
    `<h2 id="${esc(s.id)}">${esc(s.id)} · ${verdict}</h2><div>${esc(s.title)}</div>`,
    incident(facts, page.writeups?.get(s.id)),
    facts?.topology ? topologyPicture(facts.topology) : '',
    reproduce(s, provider, facts, invocation),
    s.skipReason ? `<div class="dim">${esc(s.skipReason)}</div>` : '',
    ...(s.skippedFixes ?? []).map(
      ({ fix, reason }) => `<div class="dim">fix ${esc(fix)} skipped: ${esc(reason)}</div>`,
    ),
    s.error ? `<div class="bad">${esc(s.error.message)}</div>` : '',
    `<table><tr><th>fix variant</th><th>phase</th><th>verdict</th><th>probes</th><th>checks</th><th>captures</th></tr>${rows.join('')}</table>`,
    ...probes,
  ].join('\n');
}

/** The phase's evidence checks: held, did not hold, or a number only reported. */
function checkCell(p: PhaseResult): string {
  return p.checks
    .map(
      (c) =>
        `${!c.matched ? '✗' : c.reported ? '·' : '✓'} ${esc(c.id)} <span class="dim">on ${esc(c.on)}: ${esc(c.reported ? 'reported' : 'expects')} ${esc(c.expected)}; ${esc(c.observed)}</span>`,
    )
    .join('<br>');
}

/** Where the phase's evidence (captures, iptables, conntrack per node) was written. */
function captureCell(s: ScenarioResult, p: PhaseResult, page: PageFiles): string {
  const root = page.evidence?.get(s.id) ?? s.evidenceDir;
  if (!root || p.name === 'baseline') return '';
  const dir = join(root, new Set(s.phases.map((x) => x.variant)).size > 1 ? p.variant : '', p.name);
  const href = page.dir ? relative(page.dir, dir).split(sep).map(encodeURIComponent).join('/') : `file://${dir}`;
  return `<a href="${esc(href)}">${esc(page.dir ? relative(page.dir, dir) : dir)}</a>`;
}

/** The cluster: each node a box with its pods, hosts outside, and the Services with their endpoints. */
/** About how wide a text of `chars` characters draws at a font size, in px (monospace: 0.6 em a character). */
const textWidth = (chars: number, size: number) => Math.ceil(chars * size * 0.6);

export function topologyPicture(t: TopologySpec): string {
  const podH = 20;
  const rows = Math.max(1, ...t.nodes.map((n) => t.pods.filter((p) => p.node === n.name).length));
  const boxH = 46 + rows * podH;
  const columns = [
    ...t.nodes.map((n) => ({
      name: `node/${n.name}`,
      sub: n.podCIDR,
      items: t.pods.filter((p) => p.node === n.name).map((p) => `pod/${p.name}`),
    })),
    ...t.hosts.map((h) => ({ name: `host/${h.name}`, sub: 'outside the cluster', items: [] as string[] })),
  ];
  // every label whole: a box as wide as its longest name, the picture as wide as its longest Service line
  const boxW = Math.max(
    230,
    ...columns.flatMap((c) => [textWidth(c.name.length, 13) + 16, ...c.items.map((p) => textWidth(p.length, 12) + 24)]),
  );
  const svcLines = t.services.map(
    (v) =>
      `svc/${v.name} ${v.clusterIP} ${v.ports.map((p) => `${p.port}/${p.protocol}${p.nodePort ? ` nodePort ${p.nodePort}` : ''}`).join(', ')} → ${v.endpoints.map((e) => e.pod).join(', ') || 'no endpoints'}`,
  );
  const width = Math.max(columns.length * (boxW + 20) + 20, ...svcLines.map((l) => textWidth(l.length, 11.5) + 40));
  const height = boxH + 30 + svcLines.length * 16;
  const parts = columns.flatMap((c, i) => {
    const x = 20 + i * (boxW + 20);
    return [
      `<rect x="${x}" y="10" width="${boxW}" height="${boxH}" rx="6" fill="#f8f9fb" stroke="#9aa0a6"/>`,
      `<text x="${x + 8}" y="28" font-size="13" font-weight="600">${esc(c.name)}</text>`,
      `<text x="${x + 8}" y="44" font-size="11" fill="#667">${esc(c.sub)}</text>`,
      ...c.items.map(
        (pod, j) => `<text x="${x + 16}" y="${64 + j * podH}" font-size="12" fill="#1a73e8">${esc(pod)}</text>`,
      ),
    ];
  });
  for (const [i, l] of svcLines.entries())
    parts.push(
      `<text x="20" y="${boxH + 34 + i * 16}" font-size="11.5" font-family="ui-monospace,monospace">${esc(l)}</text>`,
    );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="topology: ${esc(t.cni)}">${parts.join('')}</svg>`;
}

function probeSection(phase: PhaseResult, probe: ProbeResult): string {
  const [head, ...sentences] = diagnosisLines(probe, { evidence: false });
  const evidence = probe.diagnosis ? evidenceLines(probe.diagnosis) : [];
  return [
    `<div class="probe"><h3>${esc(phase.variant)} / ${phase.name} / ${esc(probe.id)}: ${esc(probe.observed)}</h3>`,
    `<div class="dim">${esc(probe.summary)}</div>`,
    `<div class="culprit"><b>${esc(head ?? '')}</b>${sentences.map((l) => `<div>${esc(l)}</div>`).join('')}${evidence.length ? `<pre>${esc(evidence.join('\n'))}</pre>` : ''}</div>`,
    probe.diagnosis ? sequenceDiagram(probe.diagnosis.path) : '',
    '</div>',
  ].join('\n');
}

const COLORS: Record<PathStep['kind'], string> = {
  send: '#1a73e8',
  receive: '#1a73e8',
  netfilter: '#5f6368',
  conntrack: '#8e24aa',
  drop: '#b3261e',
  reject: '#c26401',
  bpf: '#e37400',
  bridge: '#00796b',
};

/** Lanes left to right: the client (where the first packet was sent or received) first, then nodes, then the rest. */
function lanes(path: PathStep[]): string[] {
  const client = path.find((s) => s.kind === 'send' || s.kind === 'receive')?.where;
  const seen = [...new Set([...(client ? [client] : []), ...path.map((s) => s.where)])];
  const rank = (w: string) => (w === client ? 0 : w.startsWith('node/') || w === 'bridge' ? 1 : 2);
  return seen.sort((a, b) => rank(a) - rank(b));
}

export function sequenceDiagram(path: PathStep[]): string {
  if (!path.length) return '';
  const names = lanes(path);
  const laneW = 430;
  const rowH = 46;
  const top = 40;
  const width = names.length * laneW + 160;
  const height = top + path.length * rowH + 20;
  const x = (where: string) => 90 + names.indexOf(where) * laneW + laneW / 2;
  const parts: string[] = [];
  names.forEach((n) => {
    parts.push(`<text x="${x(n)}" y="20" text-anchor="middle" font-weight="600" font-size="13">${esc(n)}</text>`);
    parts.push(`<line x1="${x(n)}" y1="28" x2="${x(n)}" y2="${height - 10}" stroke="#c9ccd3" stroke-dasharray="3 4"/>`);
  });
  path.forEach((s, i) => {
    const y = top + i * rowH;
    const cx = x(s.where);
    const prev = path[i - 1];
    if (prev && prev.where !== s.where) {
      const px = x(prev.where);
      parts.push(
        `<line x1="${px}" y1="${y - rowH / 2 + 16}" x2="${cx + (cx > px ? -6 : 6)}" y2="${y + 8}" stroke="#9aa0a6" marker-end="url(#arrow)"/>`,
      );
    }
    const w = laneW - 24;
    const color = s.culprit ? '#b3261e' : COLORS[s.kind];
    parts.push(
      `<rect x="${cx - w / 2}" y="${y}" width="${w}" height="${rowH - 10}" rx="5" fill="${s.culprit ? '#fdecea' : '#fff'}" stroke="${color}" stroke-width="${s.culprit ? 2.5 : 1.2}"${s.inferred ? ' stroke-dasharray="5 3"' : ''}/>`,
      `<text x="${cx - w / 2 + 7}" y="${y + 14}" font-size="11.5" fill="${color}" font-weight="600">${labelled(`${s.hook}: ${s.action}`, 66)}</text>`,
      `<text x="${cx - w / 2 + 7}" y="${y + 29}" font-size="11" fill="#3c4043" font-family="ui-monospace,monospace">${labelled(s.packet, 60)}</text>`,
      `<text x="8" y="${y + 22}" font-size="11" fill="#80868b">${s.at.toFixed(1)} ms</text>`,
    );
    if (s.culprit)
      parts.push(
        `<text x="${cx + w / 2 + 6}" y="${y + 22}" font-size="11" fill="#b3261e" font-weight="700">◀ CULPRIT</text>`,
      );
    else if (s.inferred)
      parts.push(`<text x="${cx + w / 2 + 6}" y="${y + 22}" font-size="10" fill="#80868b">deduced</text>`);
  });
  const defs = `<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#9aa0a6"/></marker></defs>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="packet path">${defs}${parts.join('')}</svg>`;
}

/** A label cut to `n` characters in the box, whole in its tooltip (SVG <title>). */
const labelled = (s: string, n: number) =>
  s.length > n ? `<title>${esc(s)}</title>${esc(s.slice(0, n - 1))}…` : esc(s);
