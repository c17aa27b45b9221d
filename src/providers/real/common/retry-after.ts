// What client-go (and so kubectl) does with a response that says "retry after": the API server answers 429, or a
// 5xx with a Retry-After header, to a request it did not carry out (a pod created in a namespace whose service
// account has no token yet, a storage timeout); client-go waits the seconds it names and sends the request
// again, at most 10 times (rest.Request, checkWait). A 5xx without the header is an answer, not a wait.

/** client-go's default for a request's retries on Retry-After. */
const MAX_RETRIES = 10;

/** The seconds a failed API call's response asks to wait before sending it again, if it asks. */
export function retryAfterSeconds(e: unknown): number | undefined {
  const { code, headers } = (e ?? {}) as { code?: unknown; headers?: Record<string, string> };
  if (typeof code !== 'number' || (code !== 429 && code < 500)) return undefined;
  const value = Object.entries(headers ?? {}).find(([k]) => k.toLowerCase() === 'retry-after')?.[1];
  const seconds = value === undefined ? Number.NaN : Number(value);
  return Number.isInteger(seconds) && seconds >= 0 ? seconds : undefined;
}

/** `call`, sent again after the wait each Retry-After response names; the last failure is thrown. */
export async function withRetryAfter<T>(call: () => Promise<T>, wait = sleepSeconds): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await call();
    } catch (e) {
      const seconds = retryAfterSeconds(e);
      if (seconds === undefined || retry === MAX_RETRIES) throw e;
      await wait(seconds);
    }
  }
}

const sleepSeconds = (s: number) => new Promise<void>((r) => setTimeout(r, s * 1000));
