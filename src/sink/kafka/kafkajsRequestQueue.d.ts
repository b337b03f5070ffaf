// The part of kafkajs 2.2.4's internal RequestQueue that stopRequestQueueSpin patches and its test drives
// (package.json pins kafkajs to that version).
declare module 'kafkajs/src/network/requestQueue' {
  class RequestQueue {
    constructor(options: {
      maxInFlightRequests: number | null;
      requestTimeout: number;
      enforceRequestTimeout: boolean;
      clientId: string;
      broker: string;
      logger: { debug: (...args: unknown[]) => void; warn: (...args: unknown[]) => void };
    });
    pending: unknown[];
    throttledUntil: number;
    throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
    scheduleCheckPendingRequests: (this: RequestQueue) => void;
    checkPendingRequests: (this: RequestQueue) => void;
    maybeThrottle: (this: RequestQueue, clientSideThrottleTime: number | null) => void;
    destroy: (this: RequestQueue) => void;
  }
  export = RequestQueue;
}
