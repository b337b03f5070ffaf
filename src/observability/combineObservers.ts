import type { RelayObserver } from '../core/ports.js';

/** One observer that forwards every hook to each of `observers`, in order. */
export function combineObservers(...observers: readonly RelayObserver[]): RelayObserver {
  return {
    batchDelivered: (batch) => {
      for (const o of observers) o.batchDelivered?.(batch);
    },
    publishFailed: (records) => {
      for (const o of observers) o.publishFailed?.(records);
    },
    inFlight: (events) => {
      for (const o of observers) o.inFlight?.(events);
    },
    retrying: (summary) => {
      for (const o of observers) o.retrying?.(summary);
    },
    recovered: (summary) => {
      for (const o of observers) o.recovered?.(summary);
    },
    confirmed: (lsn) => {
      for (const o of observers) o.confirmed?.(lsn);
    },
  };
}
