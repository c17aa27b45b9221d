// A promise started now and awaited later, so that independent work runs side by side. Its rejection
// belongs to the code that awaits it; until then it must not count as unhandled (a failure elsewhere may
// come first and end the waiting code, which still settles it at teardown).
export function awaitedLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}
