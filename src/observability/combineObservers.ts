import type { RelayObserver } from '../core/ports.js';

type Hook = keyof RelayObserver;

/**
 * One observer that forwards every hook to each of `observers`, in order. A hook that throws is ignored: metrics
 * and readiness must never change what is delivered or when (a throw inside the poll transaction would roll back
 * the marks of events already published).
 */
export function combineObservers(...observers: readonly RelayObserver[]): RelayObserver {
  const forward =
    <K extends Hook>(hook: K) =>
    (...args: Parameters<NonNullable<RelayObserver[K]>>): void => {
      for (const observer of observers) {
        try {
          (observer[hook] as ((...a: typeof args) => void) | undefined)?.(...args);
        } catch {
          // See above: observers are best effort.
        }
      }
    };
  return {
    published: forward('published'),
    batchDelivered: forward('batchDelivered'),
    publishFailed: forward('publishFailed'),
    inFlight: forward('inFlight'),
    retrying: forward('retrying'),
    recovered: forward('recovered'),
    confirmed: forward('confirmed'),
  };
}
