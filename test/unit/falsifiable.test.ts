// Input that cannot fail is refused at validation, with the file, line, field and what to write instead.
import { describe, expect, it } from 'vitest';
import { ScenarioValidationError } from '../../src/model/errors.ts';
import { parseScenario } from '../../src/model/load-scenario.ts';

/** A valid scenario: one repeated probe, one counter check; `edit` swaps parts of it. */
const TEMPLATE = `id: s
title: t
topology: { cni: bridge, nodes: [{ name: a, podCIDR: 10.244.1.0/24 }], pods: [{ name: c, node: a }] }
probes: [{ id: p, from: c, repeat: 4, http: { to: pod/c, port: 80 } }]
baseline:
  expect: { p: ok }
  checks: [{ id: drops, on: node/a, cmd: iptables -S, counter: '(\\d+) drops', expect: { delta: 0 } }]
fault:
  steps: [{ run: { on: node/a, cmd: "true" } }]
  expect: { p: { outcome: timeout, count: { min: 1 }, otherwise: ok } }
  checks: [{ id: drops, on: node/a, cmd: iptables -S, counter: '(\\d+) drops', expect: { delta: { min: 1 } } }]
fixes:
  - steps: [{ run: { on: node/a, cmd: "true" } }]
    expect: { p: ok }
    checks: [{ id: no-drops, on: node/a, cmd: iptables -S, counter: '(\\d+) drops', expect: { delta: 0 } }]
`;

function problems(text: string): string {
  try {
    parseScenario(text, 's.yaml');
    return 'ok';
  } catch (e) {
    if (!(e instanceof ScenarioValidationError)) throw e;
    return e.message;
  }
}

const edit = (from: string, to: string) => {
  expect(TEMPLATE).toContain(from);
  return problems(TEMPLATE.replace(from, to));
};

describe('bounds that cannot fail are refused', () => {
  it('the template itself is valid', () => expect(problems(TEMPLATE)).toBe('ok'));

  it.each([
    ['count: {}', 'fault.expect.p.count: holds for every result of 4 runs'],
    ['count: { min: 0 }', 'fault.expect.p.count: holds for every result of 4 runs'],
    ['count: { max: 1000 }', 'fault.expect.p.count: holds for every result of 4 runs'],
    ['count: { min: 0, max: 4 }', 'fault.expect.p.count: holds for every result of 4 runs'],
    ['count: 5', 'fault.expect.p.count: can never hold: 4 runs'],
    ['count: { min: 3, max: 2 }', 'fault.expect.p.count: can never hold'],
    ['rate: {}', 'fault.expect.p.rate: covers 0..1'],
    ['rate: { min: 0 }', 'fault.expect.p.rate: covers 0..1'],
    ['rate: { max: 1 }', 'fault.expect.p.rate: covers 0..1'],
  ])('repeated probe %s', (bound, message) => {
    expect(edit('count: { min: 1 }', bound)).toContain(`s.yaml:10:`);
    expect(edit('count: { min: 1 }', bound)).toContain(message);
  });

  it('otherwise equal to the outcome, and otherwise without count or rate', () => {
    expect(edit('otherwise: ok', 'otherwise: timeout')).toContain(
      'fault.expect.p.otherwise: equals the outcome: every run must then be timeout',
    );
    expect(edit('count: { min: 1 }, otherwise: ok', 'otherwise: ok')).toContain(
      'fault.expect.p.otherwise: never applies',
    );
    // qualified beyond its outcome, `otherwise` equal to it still says something: the rest need not be served by c
    expect(
      edit(
        '{ outcome: timeout, count: { min: 1 }, otherwise: ok }',
        '{ outcome: ok, clientAddress: pod/c, count: { min: 1 }, otherwise: ok }',
      ),
    ).toBe('ok');
    expect(
      edit(
        '{ outcome: timeout, count: { min: 1 }, otherwise: ok }',
        '{ outcome: ok, servedBy: c, count: { min: 1 }, otherwise: ok }',
      ),
    ).toBe('ok');
  });

  it.each([
    ['delta: { min: 1 }', 'delta: {}', 'fault.checks[0].expect.delta: holds for every value (a counter never falls)'],
    ['delta: { min: 1 }', 'delta: { min: 0 }', 'fault.checks[0].expect.delta: holds for every value'],
    ['delta: { min: 1 }', 'delta: { min: -1000000000 }', 'fault.checks[0].expect.delta: holds for every value'],
  ])('check %s -> %s', (from, to, message) => {
    expect(edit(from, to)).toContain(message);
    expect(edit(from, to)).toContain('`report: true`');
  });

  it('a check bound that can never hold', () =>
    expect(edit('delta: { min: 1 }', 'delta: { min: 2, max: 1 }')).toContain(
      'fault.checks[0].expect.delta: can never hold',
    ));

  it('line counts: open at zero, empty, or a pattern that matches every line', () => {
    const lines = (expectCount: string, matches = 'DROP') =>
      edit(
        "counter: '(\\d+) drops', expect: { delta: { min: 1 } }",
        `matches: '${matches}', expect: { count: ${expectCount} }`,
      );
    expect(lines('{ min: 0 }')).toContain(
      'fault.checks[0].expect.count: holds for every value (a count of lines is never below 0)',
    );
    expect(lines('{}')).toContain('fault.checks[0].expect.count: holds for every value');
    expect(lines('{ min: 1 }', '')).toContain('fault.checks[0].matches: matches the empty string');
    expect(lines('{ min: 1 }', 'x*')).toContain('fault.checks[0].matches: matches the empty string');
    expect(lines('{ min: 1 }', '(')).toContain('fault.checks[0].matches: not a valid regular expression');
    expect(lines('0')).toBe('ok'); // an absence is a real bound
  });

  it('a number that is only reported says so, and asserts nothing', () => {
    expect(edit('expect: { delta: { min: 1 } }', 'report: true')).toBe('ok');
    expect(edit('expect: { delta: { min: 1 } }', 'report: true, expect: { delta: { min: 1 } }')).toContain('not both');
    // a phase whose only check is reported asserts nothing
    expect(
      edit(
        "  expect: { p: { outcome: timeout, count: { min: 1 }, otherwise: ok } }\n  checks: [{ id: drops, on: node/a, cmd: iptables -S, counter: '(\\d+) drops', expect: { delta: { min: 1 } } }]",
        "  expect: {}\n  checks: [{ id: drops, on: node/a, cmd: iptables -S, counter: '(\\d+) drops', report: true }]",
      ),
    ).toContain('this phase asserts nothing');
  });
});

describe('probes that cannot run as written', () => {
  it('parallel runs of a DNS probe with a fixed source port are refused (each run would bind the port)', () => {
    const text = TEMPLATE.replace(
      'probes: [{ id: p, from: c, repeat: 4, http: { to: pod/c, port: 80 } }]',
      'probes: [{ id: p, from: c, repeat: 4, parallel: 2, dns: { server: pod/c, name: a.default.svc.cluster.local, tool: agent, sourcePort: 40000 } }]',
    );
    expect(problems(text)).toContain('probes[0].parallel: parallel runs cannot share one fixed source port');
  });

  it('the same for a UDP probe with a fixed source port', () => {
    const text = TEMPLATE.replace(
      'probes: [{ id: p, from: c, repeat: 4, http: { to: pod/c, port: 80 } }]',
      'probes: [{ id: p, from: c, repeat: 4, parallel: 2, udp: { to: pod/c, port: 80, sourcePort: 12345 } }]',
    );
    expect(problems(text)).toContain(
      'probes[0].parallel: parallel runs cannot share one fixed source port: each run binds it (Address already in use) (received 2, expected parallel: 1 with udp.sourcePort, or no sourcePort)',
    );
  });
});

describe('a fault must show a symptom, a fix must remove it', () => {
  const faultLikeBaseline = (t: string) =>
    t
      .replace('expect: { p: { outcome: timeout, count: { min: 1 }, otherwise: ok } }', 'expect: { p: ok }')
      .replace('expect: { delta: { min: 1 } } }]\nfixes', 'expect: { delta: 0 } }]\nfixes');

  it('a faulted phase that asserts what the baseline does is refused', () => {
    expect(problems(faultLikeBaseline(TEMPLATE))).toContain(
      'fault.expect: the faulted phase asserts nothing the baseline does not',
    );
    // a check that differs is enough: the fault's effect is asserted there
    expect(
      problems(
        TEMPLATE.replace('expect: { p: { outcome: timeout, count: { min: 1 }, otherwise: ok } }', 'expect: { p: ok }'),
      ),
    ).toBe('ok');
  });

  it('a control check does not count as the difference', () => {
    const text = TEMPLATE.replace(
      'expect: { p: { outcome: timeout, count: { min: 1 }, otherwise: ok } }',
      'expect: { p: ok }',
    ).replace('expect: { delta: { min: 1 } } }]\nfixes', 'expect: { delta: { min: 1 } }, control: true }]\nfixes');
    expect(problems(text)).toContain('the faulted phase asserts nothing the baseline does not');
  });

  it("preserve: the baseline's outcomes after the fault, and a check that proves the change happened", () => {
    const preserve = (t: string) => t.replace('title: t\n', 'title: t\npurpose: preserve\n');
    expect(
      problems(
        preserve(
          TEMPLATE.replace(
            'expect: { p: { outcome: timeout, count: { min: 1 }, otherwise: ok } }',
            'expect: { p: ok }',
          ),
        ),
      ),
    ).toBe('ok');
    expect(problems(preserve(faultLikeBaseline(TEMPLATE)))).toContain(
      "fault.checks: a preserve scenario expects the baseline's outcomes after its fault, so only a check can prove the change happened",
    );
  });

  it('a fix that asserts what the faulted phase does is refused', () => {
    const text = TEMPLATE.replace(
      '    expect: { p: ok }\n',
      '    expect: { p: { outcome: timeout, count: { min: 1 }, otherwise: ok } }\n',
    ).replace(/expect: \{ delta: 0 \} \}\]\n$/, 'expect: { delta: { min: 1 } } }]\n');
    expect(problems(text)).toContain('fixes[0].expect: fix fix asserts nothing the faulted phase does not');
  });
});
