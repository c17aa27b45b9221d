// src/observe/probes/classify.ts, classifyCurl: an HTTP probe's outcome from curl's exit and the wire.
import { describe, expect, it } from 'vitest';
import { classifyCurl, type CurlResult } from '../../../src/observe/probes/classify.ts';
import { client, icmp, SYN, tcp, vip, wire } from './wire.ts';

const curl = (exitCode: number | undefined, stderr = '', over: Partial<CurlResult> = {}): CurlResult => ({
  exitCode,
  stderr,
  httpCode: 0,
  body: '',
  ...over,
});
const SYN_ACK = tcp('10.96.0.20.80', '10.244.1.2.44186', 'S.');

describe('curl exit 0', () => {
  it("a 2xx or 3xx answer is ok, served by the pod the body names, from the SYN-ACK's source", () => {
    expect(classifyCurl(curl(0, '', { httpCode: 200, body: ' web\n' }), wire(SYN, SYN_ACK), client, vip)).toEqual({
      outcome: 'ok',
      reason: 'HTTP 200; SYN-ACK from 10.96.0.20:80',
      servedBy: 'web',
      source: '10.96.0.20:80',
    });
    expect(classifyCurl(curl(0, '', { httpCode: 399 }), [], client, vip).outcome).toBe('ok');
  });

  it("the server's x-client-address header is the client address it saw", () => {
    expect(
      classifyCurl(curl(0, '', { httpCode: 200, body: 'web\n', clientAddress: '172.18.0.3:61002' }), [], client, vip),
    ).toMatchObject({
      outcome: 'ok',
      reason: 'HTTP 200; the handshake was not captured; the server saw the client as 172.18.0.3:61002',
      servedBy: 'web',
      clientAddress: '172.18.0.3:61002',
    });
    expect(
      classifyCurl(curl(0, '', { httpCode: 200, clientAddress: '' }), [], client, vip).clientAddress,
    ).toBeUndefined();
  });

  it('without a captured handshake or a body, ok says so and names nobody', () => {
    expect(classifyCurl(curl(0, '', { httpCode: 204, body: ' \n' }), [], client, vip)).toEqual({
      outcome: 'ok',
      reason: 'HTTP 204; the handshake was not captured',
      servedBy: undefined,
      source: undefined,
    });
  });

  it('an HTTP status outside 200..399 is a wrong answer', () => {
    expect(classifyCurl(curl(0, '', { httpCode: 400, body: 'web' }), wire(SYN_ACK), client, vip)).toEqual({
      outcome: 'wrong-answer',
      reason: 'HTTP 400',
    });
    expect(classifyCurl(curl(0, '', { httpCode: 503 }), [], client, vip)).toEqual({
      outcome: 'wrong-answer',
      reason: 'HTTP 503',
    });
    expect(classifyCurl(curl(0, '', { httpCode: 199 }), [], client, vip).outcome).toBe('wrong-answer');
  });
});

describe("the wire decides before curl's words", () => {
  it("a SYN-ACK from another address is an unexpected source, with the client's RST and curl's exit", () => {
    const seen = wire(
      SYN,
      tcp('10.244.1.3.8080', '10.244.1.2.44186', 'S.'),
      tcp('10.244.1.2.44186', '10.244.1.3.8080', 'R'),
    );
    expect(classifyCurl(curl(28, 'curl: (28) Connection timed out'), seen, client, vip)).toEqual({
      outcome: 'unexpected-source',
      reason:
        'SYN-ACK from 10.244.1.3:8080, expected from 10.96.0.20:80; client answered RST to 10.244.1.3:8080; curl exit 28',
      source: '10.244.1.3:8080',
    });
  });

  it("without the client's RST, or an exit code (curl killed), the reason leaves them out", () => {
    const seen = wire(SYN, tcp('10.244.1.3.8080', '10.244.1.2.44186', 'S.'));
    expect(classifyCurl(curl(undefined), seen, client, vip).reason).toBe(
      'SYN-ACK from 10.244.1.3:8080, expected from 10.96.0.20:80',
    );
  });

  it("a RST or ICMP answering the SYN names itself and curl's exit", () => {
    const rst = wire(SYN, tcp('10.96.0.20.80', '10.244.1.2.44186', 'R.'));
    expect(classifyCurl(curl(7, "curl: (7) Couldn't connect to server"), rst, client, vip)).toEqual({
      outcome: 'refused',
      reason: 'RST from 10.96.0.20:80 in answer to the SYN to 10.96.0.20:80; curl exit 7',
      source: '10.96.0.20:80',
    });
    const unreachable = wire(SYN, icmp('10.99.0.2', '10.244.1.2', 'host 10.96.0.20 unreachable'));
    expect(
      classifyCurl(curl(7, 'curl: (7) Failed to connect: Connection refused'), unreachable, client, vip),
    ).toMatchObject({ outcome: 'unreachable', source: '10.99.0.2' });
  });

  it('the packets are read only when curl failed', () => {
    expect(
      classifyCurl(
        curl(0, '', { httpCode: 200 }),
        wire(SYN, tcp('10.244.1.3.8080', '10.244.1.2.44186', 'S.')),
        client,
        vip,
      ).outcome,
    ).toBe('ok');
  });
});

describe('curl exit 28 (timeout)', () => {
  it('connected, then no HTTP answer: the connect time is given in ms', () => {
    expect(
      classifyCurl(
        curl(28, 'curl: (28) Operation timed out', { connectSeconds: 0.0123 }),
        wire(SYN, SYN_ACK),
        client,
        vip,
      ),
    ).toEqual({
      outcome: 'timeout',
      reason: 'connected in 12.3 ms, then no HTTP response (curl exit 28)',
    });
  });

  it("a SYN without answer: curl's last line, and that the SYN got none", () => {
    expect(
      classifyCurl(
        curl(28, 'resolving\ncurl: (28) Connection timed out after 1001 milliseconds\n', { connectSeconds: 0 }),
        wire(SYN),
        client,
        vip,
      ),
    ).toEqual({
      outcome: 'timeout',
      reason: 'curl: (28) Connection timed out after 1001 milliseconds; the SYN got no answer',
    });
  });

  it('no SYN captured and nothing printed', () => {
    expect(classifyCurl(curl(28), [], client, vip)).toEqual({ outcome: 'timeout', reason: 'curl exit 28' });
  });

  it('a connect time with another exit is no timeout', () => {
    expect(
      classifyCurl(curl(52, 'curl: (52) Empty reply from server', { connectSeconds: 0.01 }), [], client, vip),
    ).toEqual({ outcome: 'error', reason: 'curl: (52) Empty reply from server' });
  });
});

describe('curl exit 7 with no packet sent: the errno of a second connect()', () => {
  it.each([
    ['ECONNREFUSED', 'refused'],
    ['EHOSTUNREACH', 'unreachable'],
    ['ENETUNREACH', 'unreachable'],
    ['ETIMEDOUT', 'timeout'],
    ['ECONNRESET', 'reset'],
  ] as const)('%s is %s', (errno, outcome) => {
    expect(classifyCurl(curl(7, "curl: (7) Couldn't connect to server"), [], client, vip, errno)).toEqual({
      outcome,
      reason: `connect() failed in the client with ${errno}; no packet left it (curl exit 7)`,
    });
  });

  it('not when a SYN left the pod, not for an errno it does not know, not for another exit', () => {
    const couldNot = "curl: (7) Couldn't connect to server";
    expect(classifyCurl(curl(7, couldNot), wire(SYN), client, vip, 'EHOSTUNREACH')).toEqual({
      outcome: 'error',
      reason: couldNot,
    });
    expect(classifyCurl(curl(7, couldNot), [], client, vip, 'EPERM')).toEqual({ outcome: 'error', reason: couldNot });
    expect(classifyCurl(curl(28, 'curl: (28) timed out'), [], client, vip, 'EHOSTUNREACH').outcome).toBe('timeout');
  });

  it("a SYN from another host, or a SYN-ACK from the client, is not the client's SYN", () => {
    const notSent = wire(tcp('10.244.1.9.44186', '10.96.0.20.80', 'S'), tcp('10.244.1.2.80', '10.244.1.9.5000', 'S.'));
    expect(classifyCurl(curl(7, 'curl: (7) x'), notSent, client, vip, 'EHOSTUNREACH').outcome).toBe('unreachable');
  });
});

describe("curl's own words, when nothing on the wire explains it", () => {
  it('exit 7 "refused" is refused, "no route"/"unreachable" is unreachable', () => {
    expect(
      classifyCurl(curl(7, 'curl: (7) Failed to connect to 10.96.0.20 port 80: Connection refused'), [], client, vip),
    ).toEqual({
      outcome: 'refused',
      reason:
        "curl: (7) Failed to connect to 10.96.0.20 port 80: Connection refused (curl's message; nothing captured)",
    });
    expect(classifyCurl(curl(7, 'curl: (7) Failed to connect: No route to host'), [], client, vip)).toEqual({
      outcome: 'unreachable',
      reason: "curl: (7) Failed to connect: No route to host (curl's message; nothing captured)",
    });
    expect(classifyCurl(curl(7, 'curl: (7) Network is unreachable'), [], client, vip).outcome).toBe('unreachable');
  });

  it('those words with another exit code are an error', () => {
    expect(classifyCurl(curl(35, 'curl: (35) Connection refused by TLS peer'), [], client, vip).outcome).toBe('error');
    expect(classifyCurl(curl(35, 'curl: (35) Network unreachable'), [], client, vip).outcome).toBe('error');
  });

  it.each([56, 52, 55])('exit %i with "reset" is reset', (exitCode) => {
    expect(classifyCurl(curl(exitCode, 'curl: (56) Recv failure: Connection reset by peer'), [], client, vip)).toEqual({
      outcome: 'reset',
      reason: 'curl: (56) Recv failure: Connection reset by peer',
    });
  });

  it('"reset" with another exit, or those exits without "reset", are an error', () => {
    expect(classifyCurl(curl(7, 'curl: (7) Connection reset'), [], client, vip).outcome).toBe('error');
    expect(classifyCurl(curl(52, 'curl: (52) Empty reply from server'), [], client, vip).outcome).toBe('error');
  });

  it("anything else is an error, in curl's words or by its exit code", () => {
    expect(classifyCurl(curl(6, 'curl: (6) Could not resolve host: web'), [], client, vip)).toEqual({
      outcome: 'error',
      reason: 'curl: (6) Could not resolve host: web',
    });
    expect(classifyCurl(curl(6, '  \n'), [], client, vip)).toEqual({ outcome: 'error', reason: 'curl exit 6' });
  });
});
