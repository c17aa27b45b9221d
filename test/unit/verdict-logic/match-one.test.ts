// src/observe/expect/match-expectation.ts, one run: each field of an expectation compared with what the probe observed.
import { describe, expect, it } from 'vitest';
import { matchExpectation } from '../../../src/observe/expect/match-expectation.ts';
import type { ExpectedSpec } from '../../../src/model/scenario-schema.ts';
import { observation } from './results.ts';

const addresses: Record<string, string> = {
  'pod/web': '10.244.1.3',
  'pod/client': '10.244.1.2',
  'node/node-b': '172.18.0.3',
  'svc/web': '10.96.0.20',
  'svc/kube-dns': '10.96.0.10',
};
const address = (ref: string) => addresses[ref] ?? `unresolved ${ref}`;
const match = (expected: ExpectedSpec, observed = observation()) => matchExpectation(expected, observed, address);

describe('outcome', () => {
  it('an outcome alone (the short form) holds when the probe observed it', () => {
    expect(match('ok')).toEqual({ matched: true, expected: 'ok' });
    expect(match({ outcome: 'ok' })).toEqual({ matched: true, expected: 'ok' });
  });

  it('another outcome does not hold, and the mismatch says what was observed', () => {
    expect(match('ok', observation({ outcome: 'timeout', summary: 'client -> web = timeout' }))).toEqual({
      matched: false,
      expected: 'ok',
      mismatch: 'expected ok, observed timeout: client -> web = timeout',
    });
  });

  it('a list of failures holds for any of them, and says which were allowed', () => {
    const down: ExpectedSpec = { outcome: ['timeout', 'unreachable'], connected: false };
    const observed = (outcome: 'timeout' | 'unreachable' | 'refused') =>
      observation({ outcome, summary: `client -> web = ${outcome}`, connected: false });
    expect(match(down, observed('timeout')).matched).toBe(true);
    expect(match(down, observed('unreachable')).matched).toBe(true);
    expect(match(down, observed('refused'))).toEqual({
      matched: false,
      expected: 'timeout or unreachable, TCP not connected',
      mismatch: 'expected timeout or unreachable, observed refused: client -> web = refused',
    });
  });
});

describe('servedBy', () => {
  it('holds when the named pod answered', () => {
    expect(match({ outcome: 'ok', servedBy: 'web' }, observation({ servedBy: 'web' }))).toEqual({
      matched: true,
      expected: 'ok, served by web',
    });
  });

  it('fails when another pod, or nobody named, answered', () => {
    expect(match({ outcome: 'ok', servedBy: 'web' }, observation({ servedBy: 'web-2' }))).toMatchObject({
      matched: false,
      mismatch: 'expected an answer from web, got one from web-2',
    });
    expect(match({ outcome: 'ok', servedBy: 'web' }, observation())).toMatchObject({
      matched: false,
      mismatch: 'expected an answer from web, got one from nobody named',
    });
  });

  it('is compared only once the outcome matched', () => {
    expect(
      match({ outcome: 'ok', servedBy: 'web' }, observation({ outcome: 'reset', servedBy: 'web-2' })).mismatch,
    ).toMatch(/^expected ok, observed reset/);
  });
});

describe('source', () => {
  it("holds when the answer came from the reference's address, whatever its port", () => {
    expect(
      match(
        { outcome: 'unexpected-source', source: 'pod/web' },
        observation({ outcome: 'unexpected-source', source: '10.244.1.3:8080' }),
      ),
    ).toEqual({
      matched: true,
      expected: 'unexpected-source, from pod/web (10.244.1.3)',
    });
  });

  it('fails when it came from another address, or from nowhere', () => {
    expect(match({ outcome: 'ok', source: 'pod/web' }, observation({ source: '10.96.0.20:80' }))).toMatchObject({
      matched: false,
      mismatch: 'expected the reply from 10.244.1.3, it came from 10.96.0.20:80',
    });
    expect(match({ outcome: 'ok', source: 'pod/web' }, observation())).toMatchObject({
      matched: false,
      mismatch: 'expected the reply from 10.244.1.3, it came from nowhere',
    });
  });

  it('an address that only starts like the expected one is another address', () => {
    expect(match({ outcome: 'ok', source: 'pod/web' }, observation({ source: '10.244.1.30:80' })).matched).toBe(false);
  });
});

describe('connected', () => {
  it('connected: true holds only for a completed handshake', () => {
    expect(
      match({ outcome: 'timeout', connected: true }, observation({ outcome: 'timeout', connected: true })),
    ).toEqual({ matched: true, expected: 'timeout, TCP connected' });
    expect(
      match({ outcome: 'timeout', connected: true }, observation({ outcome: 'timeout', connected: false })),
    ).toMatchObject({
      matched: false,
      mismatch: 'expected the TCP handshake to complete; it did not',
    });
    expect(match({ outcome: 'timeout', connected: true }, observation({ outcome: 'timeout' })).matched).toBe(false);
  });

  it('connected: false holds only when the handshake did not complete', () => {
    expect(
      match({ outcome: 'timeout', connected: false }, observation({ outcome: 'timeout', connected: false })),
    ).toEqual({ matched: true, expected: 'timeout, TCP not connected' });
    expect(
      match({ outcome: 'timeout', connected: false }, observation({ outcome: 'timeout', connected: true })),
    ).toMatchObject({
      matched: false,
      mismatch: 'expected the TCP handshake to not complete; it did',
    });
  });

  it('without connected, the handshake is not compared', () => {
    expect(match({ outcome: 'timeout' }, observation({ outcome: 'timeout', connected: true })).matched).toBe(true);
  });
});

describe('sentTo', () => {
  it("a reference is resolved and compared with the SYN's address, any port", () => {
    expect(match({ outcome: 'ok', sentTo: 'pod/web' }, observation({ sentTo: '10.244.1.3:8080' }))).toEqual({
      matched: true,
      expected: 'ok, SYN sent to 10.244.1.3',
    });
    expect(match({ outcome: 'ok', sentTo: 'pod/web' }, observation({ sentTo: '10.96.0.20:80' }))).toMatchObject({
      matched: false,
      mismatch: 'expected the SYN to go to 10.244.1.3, it went to 10.96.0.20:80',
    });
  });

  it('an IP:PORT must match exactly', () => {
    expect(
      match({ outcome: 'ok', sentTo: '10.244.1.3:8080' }, observation({ sentTo: '10.244.1.3:8080' })).matched,
    ).toBe(true);
    expect(match({ outcome: 'ok', sentTo: '10.244.1.3:8080' }, observation({ sentTo: '10.244.1.3:80' }))).toMatchObject(
      { matched: false, mismatch: 'expected the SYN to go to 10.244.1.3:8080, it went to 10.244.1.3:80' },
    );
  });

  it('fails when no SYN was seen', () => {
    expect(match({ outcome: 'ok', sentTo: 'pod/web' }, observation())).toMatchObject({
      matched: false,
      mismatch: 'expected the SYN to go to 10.244.1.3, it went to nowhere',
    });
  });
});

describe('answer (DNS)', () => {
  it('an ok reply holds when its answer section has the address', () => {
    expect(
      match({ outcome: 'ok', answer: 'svc/kube-dns' }, observation({ answers: ['10.96.0.9', '10.96.0.10'] })),
    ).toEqual({ matched: true, expected: 'ok, answer 10.96.0.10' });
    expect(match({ outcome: 'ok', answer: '10.96.0.10' }, observation({ answers: ['10.96.0.10'] }))).toEqual({
      matched: true,
      expected: 'ok, answer 10.96.0.10',
    });
  });

  it('an ok reply without it is a wrong answer', () => {
    expect(match({ outcome: 'ok', answer: '10.96.0.10' }, observation({ answers: [], summary: 's' }))).toMatchObject({
      matched: false,
      mismatch: 'expected ok, observed wrong-answer (answer empty, expected 10.96.0.10): s',
    });
    expect(match({ outcome: 'ok', answer: '10.96.0.10' }, observation({ summary: 's' }))).toMatchObject({
      matched: false,
      mismatch: 'expected ok, observed wrong-answer (answer empty, expected 10.96.0.10): s',
    });
    expect(
      match({ outcome: 'wrong-answer', answer: '10.96.0.10' }, observation({ answers: ['1.2.3.4', '5.6.7.8'] })),
    ).toEqual({ matched: true, expected: 'wrong-answer, answer 10.96.0.10' });
  });

  it('the mismatch lists every address the reply held', () => {
    expect(
      match({ outcome: 'ok', answer: '10.96.0.10' }, observation({ answers: ['1.2.3.4', '5.6.7.8'], summary: 's' }))
        .mismatch,
    ).toBe('expected ok, observed wrong-answer (answer 1.2.3.4,5.6.7.8, expected 10.96.0.10): s');
  });

  it('a reply that was not ok is judged by its outcome alone', () => {
    expect(
      match({ outcome: 'timeout', answer: '10.96.0.10' }, observation({ outcome: 'timeout', answers: ['1.2.3.4'] }))
        .matched,
    ).toBe(true);
    expect(
      match({ outcome: 'ok', answer: '10.96.0.10' }, observation({ outcome: 'timeout', summary: 's' })).mismatch,
    ).toBe('expected ok, observed timeout: s');
  });
});

describe('clientAddress', () => {
  it('a reference is resolved and compared with the address the server reported, whatever the port (SNAT may change it)', () => {
    expect(
      match({ outcome: 'ok', clientAddress: 'pod/client' }, observation({ clientAddress: '10.244.1.2:20001' })),
    ).toEqual({ matched: true, expected: 'ok, the server saw the client as pod/client (10.244.1.2)' });
    expect(
      match({ outcome: 'ok', clientAddress: '172.18.0.3' }, observation({ clientAddress: '172.18.0.3:62000' })),
    ).toEqual({ matched: true, expected: 'ok, the server saw the client as 172.18.0.3' });
  });

  it("fails when the server saw another address (a node's, after SNAT), or reported none", () => {
    expect(
      match({ outcome: 'ok', clientAddress: 'pod/client' }, observation({ clientAddress: '172.18.0.3:62000' })),
    ).toMatchObject({
      matched: false,
      mismatch: 'expected the server to see the client as 10.244.1.2, it saw 172.18.0.3:62000',
    });
    expect(match({ outcome: 'ok', clientAddress: 'node/node-b' }, observation())).toMatchObject({
      matched: false,
      mismatch: 'expected the server to see the client as 172.18.0.3, it saw nothing it reported',
    });
  });

  it('an address that only starts like the expected one is another address', () => {
    expect(
      match({ outcome: 'ok', clientAddress: 'pod/client' }, observation({ clientAddress: '10.244.1.20:20001' }))
        .matched,
    ).toBe(false);
  });

  it('is compared only once the outcome matched', () => {
    expect(
      match({ outcome: 'ok', clientAddress: 'pod/client' }, observation({ outcome: 'timeout', summary: 's' })).mismatch,
    ).toBe('expected ok, observed timeout: s');
  });
});

it('a field present but unset (as a copy made with a spread carries it) asserts nothing', () => {
  const unset = {
    outcome: 'ok',
    servedBy: undefined,
    source: undefined,
    sentTo: undefined,
    answer: undefined,
    clientAddress: undefined,
  } as unknown as ExpectedSpec;
  expect(
    match(
      unset,
      observation({ servedBy: 'web', source: '10.0.0.1:80', sentTo: '10.0.0.1:80', clientAddress: '10.0.0.2:1' }),
    ),
  ).toEqual({
    matched: true,
    expected: 'ok',
  });
});

it('every field of the expectation is read into one line, in a fixed order', () => {
  const spec = {
    outcome: 'ok',
    servedBy: 'web',
    source: 'pod/web',
    connected: true,
    sentTo: 'svc/web',
    answer: '10.96.0.10',
  } as ExpectedSpec;
  const seen = observation({
    servedBy: 'web',
    source: '10.244.1.3:8080',
    connected: true,
    sentTo: '10.96.0.20:80',
    answers: ['10.96.0.10'],
  });
  expect(match(spec, seen)).toEqual({
    matched: true,
    expected: 'ok, served by web, from pod/web (10.244.1.3), TCP connected, SYN sent to 10.96.0.20, answer 10.96.0.10',
  });
});

describe('what only the wire tells', () => {
  it("a source or a SYN's destination is not judged from a probe none of whose packets were captured: unobserved", () => {
    const none = observation({ outcome: 'ok', source: undefined, detail: { packets: [] }, summary: 'c -> web = ok' });
    expect(match({ outcome: 'ok', sentTo: 'pod/web' }, none)).toEqual({
      matched: false,
      expected: 'ok, SYN sent to 10.244.1.3',
      mismatch:
        "unobserved: none of the probe's packets was captured on the client's interface, so where its SYN went cannot be judged: c -> web = ok",
    });
    expect(
      match({ outcome: 'unexpected-source', source: 'pod/web' }, { ...none, outcome: 'unexpected-source' }).mismatch,
    ).toMatch(/^unobserved: .* so its source cannot be judged/);
    // an outcome alone, or curl's word on the handshake, needs no capture
    expect(match('ok', none).matched).toBe(true);
    expect(match({ outcome: 'ok', connected: true }, { ...none, connected: true }).matched).toBe(true);
  });
});

describe('answer (DNS), a list', () => {
  it('holds for exactly those addresses, in any order, references resolved', () => {
    expect(
      match(
        { outcome: 'ok', answer: ['pod/web', '10.244.1.4'] },
        observation({ answers: ['10.244.1.4', '10.244.1.3'] }),
      ),
    ).toEqual({ matched: true, expected: 'ok, answer exactly 10.244.1.3,10.244.1.4' });
  });

  it('one address more, one less, or another in its place is a wrong answer, and says which set was expected', () => {
    const spec: ExpectedSpec = { outcome: 'ok', answer: ['10.244.1.3', '10.244.1.4'] };
    expect(match(spec, observation({ answers: ['10.244.1.3', '10.244.1.4', '10.244.1.5'], summary: 's' }))).toEqual({
      matched: false,
      expected: 'ok, answer exactly 10.244.1.3,10.244.1.4',
      mismatch:
        'expected ok, observed wrong-answer (answer 10.244.1.3,10.244.1.4,10.244.1.5, expected exactly 10.244.1.3,10.244.1.4): s',
    });
    expect(match(spec, observation({ answers: ['10.244.1.3'] })).matched).toBe(false);
    expect(match(spec, observation({ answers: ['10.244.1.3', '10.244.1.5'] })).matched).toBe(false);
    // the same count twice over one address is not the set
    expect(match(spec, observation({ answers: ['10.244.1.3', '10.244.1.3'] })).matched).toBe(false);
    expect(match(spec, observation({ summary: 's' })).mismatch).toBe(
      'expected ok, observed wrong-answer (answer empty, expected exactly 10.244.1.3,10.244.1.4): s',
    );
  });
});

it('a lookup that failed is its failure, not a wrong answer, whatever the answer expected', () => {
  expect(
    match({ outcome: ['timeout', 'refused'], answer: '10.96.0.10' }, observation({ outcome: 'refused', summary: 's' })),
  ).toEqual({ matched: true, expected: 'timeout or refused, answer 10.96.0.10' });
});

describe('httpStatus', () => {
  it('holds when the answer carried that status', () => {
    expect(
      match({ outcome: 'wrong-answer', httpStatus: 503 }, observation({ outcome: 'wrong-answer', httpStatus: 503 })),
    ).toEqual({
      matched: true,
      expected: 'wrong-answer, HTTP 503',
    });
  });

  it('fails on another status, or on no HTTP answer', () => {
    expect(match({ outcome: 'ok', httpStatus: 200 }, observation({ httpStatus: 204 }))).toEqual({
      matched: false,
      expected: 'ok, HTTP 200',
      mismatch: 'expected HTTP 200, got 204',
    });
    expect(match({ outcome: 'ok', httpStatus: 200 }, observation())).toMatchObject({
      matched: false,
      mismatch: 'expected HTTP 200, got no HTTP answer',
    });
  });

  it('without httpStatus, the status is not compared', () => {
    expect(match('ok', observation({ httpStatus: 204 })).matched).toBe(true);
  });
});

describe('localEndpoints (a health check)', () => {
  it('holds when the health check reported that count, 0 included', () => {
    expect(match({ outcome: 'ok', localEndpoints: 2 }, observation({ localEndpoints: 2 }))).toEqual({
      matched: true,
      expected: 'ok, localEndpoints 2',
    });
    expect(
      match(
        { outcome: 'wrong-answer', httpStatus: 503, localEndpoints: 0 },
        observation({ outcome: 'wrong-answer', httpStatus: 503, localEndpoints: 0 }),
      ),
    ).toEqual({ matched: true, expected: 'wrong-answer, HTTP 503, localEndpoints 0' });
  });

  it('fails on another count, or when the answer reported none', () => {
    expect(match({ outcome: 'ok', localEndpoints: 1 }, observation({ localEndpoints: 2 }))).toEqual({
      matched: false,
      expected: 'ok, localEndpoints 1',
      mismatch: 'expected a health check reporting localEndpoints 1, got 2',
    });
    expect(match({ outcome: 'ok', localEndpoints: 0 }, observation())).toMatchObject({
      matched: false,
      mismatch: 'expected a health check reporting localEndpoints 0, got no such answer',
    });
  });

  it('without localEndpoints, the count is not compared', () => {
    expect(match('ok', observation({ localEndpoints: 3 })).matched).toBe(true);
  });
});

it('a source and a SYN destination both unobserved are both named', () => {
  const none = observation({ detail: { packets: [] }, summary: 's' });
  expect(match({ outcome: 'ok', source: 'pod/web', sentTo: 'pod/web' }, none).mismatch).toBe(
    "unobserved: none of the probe's packets was captured on the client's interface, so its source and where its SYN went cannot be judged: s",
  );
});

it('a probe whose packets were captured is judged on its source and its SYN', () => {
  const captured = observation({
    source: '10.244.1.3:80',
    sentTo: '10.244.1.3:8080',
    detail: { packets: ['IP 10.244.1.2.40000 > 10.244.1.3.8080: Flags [S]'] },
  });
  expect(match({ outcome: 'ok', source: 'pod/web', sentTo: 'pod/web' }, captured)).toEqual({
    matched: true,
    expected: 'ok, from pod/web (10.244.1.3), SYN sent to 10.244.1.3',
  });
});
