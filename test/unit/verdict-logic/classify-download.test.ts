// src/observe/probes/classify.ts, classifyDownload: ok only when every byte arrived; a reset names the
// packet that missed its reverse NAT when the capture holds it.
import { describe, expect, it } from 'vitest';
import { classifyDownload, type DownloadResult } from '../../../src/observe/probes/classify.ts';
import { client, SYN, tcp, vip, wire } from './wire.ts';

const download = (over: Partial<DownloadResult>): DownloadResult => ({
  exitCode: 0,
  stderr: '',
  httpCode: 200,
  body: '',
  bytes: 1000,
  sizeDownload: 1000,
  ...over,
});
const SYN_ACK = tcp('10.96.0.20.80', '10.244.1.2.44186', 'S.');
const RESET = 'curl: (56) Recv failure: Connection reset by peer';

describe('a completed download', () => {
  it("every byte with HTTP 200 is ok, served by the header's pod, from the SYN-ACK's source", () => {
    expect(classifyDownload(download({ servedBy: 'web' }), wire(SYN, SYN_ACK), client, vip)).toEqual({
      outcome: 'ok',
      reason: 'HTTP 200, 1000 of 1000 bytes; SYN-ACK from 10.96.0.20:80',
      servedBy: 'web',
      source: '10.96.0.20:80',
    });
    expect(classifyDownload(download({ servedBy: '' }), [], client, vip)).toEqual({
      outcome: 'ok',
      reason: 'HTTP 200, 1000 of 1000 bytes',
      servedBy: undefined,
      source: undefined,
    });
  });

  it('the x-client-address header names the client address the server saw', () => {
    expect(
      classifyDownload(download({ servedBy: 'web', clientAddress: '10.244.1.2:41000' }), [], client, vip).clientAddress,
    ).toBe('10.244.1.2:41000');
  });

  it('fewer bytes, or another status, is a wrong answer', () => {
    expect(classifyDownload(download({ sizeDownload: 999 }), [], client, vip)).toEqual({
      outcome: 'wrong-answer',
      reason: 'HTTP 200, 999 of 1000 bytes',
    });
    expect(classifyDownload(download({ httpCode: 206 }), [], client, vip)).toEqual({
      outcome: 'wrong-answer',
      reason: 'HTTP 206, 1000 of 1000 bytes',
    });
  });
});

describe('a reset download', () => {
  it.each([56, 52, 55, 18])('curl exit %i with "reset" is reset, after the bytes that arrived', (exitCode) => {
    expect(
      classifyDownload(download({ exitCode, stderr: `progress\n${RESET}\n`, sizeDownload: 400 }), [], client, vip),
    ).toEqual({ outcome: 'reset', reason: `${RESET}, after 400 of 1000 bytes` });
  });

  it.each([56, 52, 55, 18])(
    "exit %i: names the segment that missed its reverse NAT, and the client's RST to it",
    (exitCode) => {
      const seen = wire(
        SYN,
        SYN_ACK,
        tcp('10.244.1.3.8080', '10.244.1.2.44186', '.'),
        tcp('10.244.1.2.44186', '10.244.1.3.8080', 'R'),
      );
      expect(classifyDownload(download({ exitCode, stderr: RESET, sizeDownload: 400 }), seen, client, vip)).toEqual({
        outcome: 'reset',
        reason: `a packet from 10.244.1.3:8080 (not 10.96.0.20:80: it missed its reverse NAT) reached the client, which answered RST to 10.244.1.3:8080; curl exit ${exitCode} "${RESET}" after 400 of 1000 bytes`,
        source: '10.244.1.3:8080',
      });
    },
  );

  it("without the client's RST, the reason leaves it out", () => {
    const seen = wire(SYN, SYN_ACK, tcp('10.244.1.3.8080', '10.244.1.2.44186', '.'));
    expect(
      classifyDownload(download({ exitCode: 56, stderr: RESET, sizeDownload: 400 }), seen, client, vip).reason,
    ).toBe(
      `a packet from 10.244.1.3:8080 (not 10.96.0.20:80: it missed its reverse NAT) reached the client; curl exit 56 "${RESET}" after 400 of 1000 bytes`,
    );
  });
});

describe('anything else is classified as a curl probe, with the bytes', () => {
  it('a timeout with bytes short', () => {
    expect(
      classifyDownload(
        download({ exitCode: 28, stderr: 'curl: (28) Operation timed out', sizeDownload: 10, connectSeconds: 0.002 }),
        [],
        client,
        vip,
      ),
    ).toEqual({
      outcome: 'timeout',
      reason: 'connected in 2.0 ms, then no HTTP response (curl exit 28), after 10 of 1000 bytes',
    });
  });

  it('every byte and HTTP 200 is still no ok when curl failed', () => {
    expect(
      classifyDownload(download({ exitCode: 28, stderr: 'curl: (28) Operation timed out' }), [], client, vip).outcome,
    ).toBe('timeout');
  });

  it('those exits without "reset", or "reset" with another exit, are no reset', () => {
    expect(
      classifyDownload(
        download({ exitCode: 18, stderr: 'curl: (18) transfer closed with 600 bytes remaining', sizeDownload: 400 }),
        [],
        client,
        vip,
      ),
    ).toEqual({
      outcome: 'error',
      reason: 'curl: (18) transfer closed with 600 bytes remaining, after 400 of 1000 bytes',
    });
    expect(
      classifyDownload(
        download({ exitCode: 7, stderr: 'curl: (7) Connection reset', sizeDownload: 0 }),
        [],
        client,
        vip,
      ).outcome,
    ).toBe('error');
  });
});
