// gate --html FILE: the gate's matrix as one self-contained page, regressions first, each row with what
// decided both sides; the same verdict sentence the console and the Markdown end and open with.
import type { GateResult } from '../engine/gate/run-gate.ts';
import { gateVerdict } from './gate-report.ts';
import { xml } from './xml-text.ts';

const ORDER = { regression: 0, unjudged: 1, improvement: 2, unchanged: 3 } as const;
const CLASS = { regression: 'bad', unjudged: 'bad', improvement: 'ok', unchanged: 'dim' } as const;

const CSS = `body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330}
h1{font-size:20px;margin:0 0 4px} .dim{color:#667} .ok{color:#137333} .bad{color:#b3261e;font-weight:600}
table{border-collapse:collapse;margin:10px 0} td,th{border:1px solid #dde;padding:3px 8px;text-align:left;vertical-align:top;font-size:13px}
th{background:#f3f4f7} code{font:12px ui-monospace,monospace}`;

export function gateHtml(g: GateResult): string {
  const rows = [...g.scenarios].sort((a, b) => ORDER[a.change] - ORDER[b.change]);
  const side = (verdict: string, by: readonly string[], reason: string) =>
    `${xml(verdict)}${by.length ? ` <span class="dim">(${xml(by.join(', '))})</span>` : ''}<div class="dim">${xml(reason)}</div>`;
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>netrepro gate</title>',
    `<style>${CSS}</style></head><body>`,
    `<h1>netrepro gate: <code>${xml(g.baseline)}</code> → <code>${xml(g.candidate)}</code></h1>`,
    `<div>${xml(gateVerdict(g))}</div>`,
    `<table><tr><th>incident</th><th>${xml(g.baseline)}</th><th>${xml(g.candidate)}</th><th>change</th></tr>`,
    ...rows.map(
      (s) =>
        `<tr><td><code>${xml(s.id)}</code></td><td>${side(s.baseline, s.baselineDecidedBy, s.baselineReason)}</td><td>${side(s.candidate, s.candidateDecidedBy, s.candidateReason)}</td><td class="${CLASS[s.change]}">${s.change}</td></tr>`,
    ),
    '</table></body></html>',
    '',
  ].join('\n');
}
