// API calls are sent again as client-go sends them: after the seconds a 429 or 5xx response's Retry-After names,
// at most 10 times; any other failure is thrown at once.
import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { retryAfterSeconds, withRetryAfter } from '../../src/providers/real/common/retry-after.ts';

const noToken = () =>
  new ApiException(500, 'No API token found for service account "default"', {}, { 'retry-after': '1' });

describe('withRetryAfter', () => {
  it('sends a request again after the wait a Retry-After response names, until it succeeds', async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await withRetryAfter(
      async () => {
        if (++calls < 3) throw noToken();
        return 'created';
      },
      async (s) => void waits.push(s),
    );
    expect(result).toBe('created');
    expect(waits).toEqual([1, 1]);
  });

  it('throws at once what does not ask to be retried', async () => {
    let calls = 0;
    const conflict = new ApiException(409, 'AlreadyExists', {}, { 'retry-after': '1' });
    await expect(
      withRetryAfter(
        async () => (calls++, Promise.reject(conflict)),
        async () => {},
      ),
    ).rejects.toBe(conflict);
    expect(calls).toBe(1);
    expect(retryAfterSeconds(new ApiException(503, 'unavailable', {}, {}))).toBeUndefined();
    expect(retryAfterSeconds(new ApiException(429, 'slow down', {}, { 'Retry-After': '2' }))).toBe(2);
    expect(retryAfterSeconds(new Error('ECONNRESET'))).toBeUndefined();
  });

  it('gives up after 10 retries, with the last failure', async () => {
    let calls = 0;
    await expect(
      withRetryAfter(
        async () => (calls++, Promise.reject(noToken())),
        async () => {},
      ),
    ).rejects.toThrow(/No API token/);
    expect(calls).toBe(11);
  });
});
