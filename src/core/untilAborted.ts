/**
 * Waits for `promise`, or rejects with the signal's reason as soon as it aborts. Unlike a race against a promise
 * that never settles, nothing is left behind once `promise` settles: a loop that waits like this once per stream
 * item would otherwise keep one reaction per wait, for the life of the process.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.finally(() => signal.removeEventListener('abort', onAbort)).then(resolve, reject);
  });
}
