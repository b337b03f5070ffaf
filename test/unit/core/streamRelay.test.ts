import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { Lsn } from '../../../src/core/lsn.js';
import type { OutboxRecord, RejectedRecord } from '../../../src/core/outboxRecord.js';
import type { ChangeStream, OutboxStore, PublishResult, Sink, StreamItem } from '../../../src/core/ports.js';
import { StreamRelay } from '../../../src/core/streamRelay.js';

// Fakes of the ports: this tests the relay's ordering and confirmation logic only; the real parts are tested
// against PostgreSQL and Kafka in the integration suites.
class ScriptedStream implements ChangeStream {
  readonly confirmed: Lsn[] = [];
  constructor(private readonly items: StreamItem[]) {}
  next(): Promise<StreamItem | undefined> {
    return Promise.resolve(this.items.shift());
  }
  buffered(): number {
    return this.items.length;
  }
  confirm(lsn: Lsn): void {
    this.confirmed.push(lsn);
  }
  stopReceiving(): Promise<void> {
    return Promise.resolve();
  }
}

class RecordingSink implements Sink {
  readonly sent: string[][] = [];
  failures = 0;
  constructor(private readonly reject: (r: OutboxRecord) => string | undefined = () => undefined) {}
  topicOf(): string {
    return 'topic';
  }
  publish(records: readonly OutboxRecord[]): Promise<PublishResult> {
    if (this.failures > 0) {
      this.failures--;
      return Promise.reject(Object.assign(new Error('broker down'), { retriable: true }));
    }
    this.sent.push(records.map((r) => r.id));
    const rejected: RejectedRecord[] = [];
    for (const record of records) {
      const reason = this.reject(record);
      if (reason !== undefined) rejected.push({ record, reason });
    }
    return Promise.resolve({ rejected });
  }
  publishDeadLetters(): Promise<void> {
    return Promise.resolve();
  }
}

class MemoryStore implements OutboxStore {
  readonly processed = new Set<string>();
  readonly dead = new Set<string>();
  findFinished(ids: readonly string[]): Promise<ReadonlySet<string>> {
    return Promise.resolve(new Set(ids.filter((id) => this.processed.has(id) || this.dead.has(id))));
  }
  markProcessed(records: readonly OutboxRecord[]): Promise<void> {
    for (const r of records) this.processed.add(r.id);
    return Promise.resolve();
  }
  markDeadLettered(rejected: readonly RejectedRecord[]): Promise<void> {
    for (const r of rejected) this.dead.add(r.record.id);
    return Promise.resolve();
  }
}

const quietLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

function record(id: string): StreamItem {
  return {
    kind: 'record',
    record: {
      id,
      aggregateType: 'a',
      aggregateId: 'x',
      eventType: 'e',
      payload: '{}',
      headers: null,
      createdAt: '',
      seq: '1',
    },
  };
}

/** Nothing buffered behind each item: every event goes out in a batch of its own, as at a low rate. */
function trickleStream(items: StreamItem[], confirmed: Lsn[] = []): ChangeStream {
  return {
    next: () => Promise.resolve(items.shift()),
    buffered: () => 0,
    confirm: (lsn) => confirmed.push(lsn),
    stopReceiving: () => Promise.resolve(),
  };
}

/** One-event transactions arriving every `everyMs`, then the end of the stream; buffered() counts what arrived. */
function arrivingStream(events: number, everyMs: number): { stream: ChangeStream; stop: () => void } {
  const arrived: (StreamItem | 'end')[] = [];
  let written = 0;
  const arrivals = setInterval(() => {
    if (written < events) arrived.push(begin(), record(`e${written++}`), { kind: 'commit', endLsn: 10n });
    else if (written++ === events) arrived.push('end');
  }, everyMs);
  const stream: ChangeStream = {
    next: async () => {
      while (arrived.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      const item = arrived.shift();
      return item === 'end' ? undefined : item;
    },
    buffered: () => arrived.length,
    confirm: () => undefined,
    stopReceiving: () => Promise.resolve(),
  };
  return { stream, stop: () => clearInterval(arrivals) };
}

function begin(commitLsn = 9n): StreamItem {
  return { kind: 'begin', commitLsn };
}

function run(
  stream: ChangeStream,
  sink: Sink,
  store: OutboxStore,
  batchSize = 10,
  freshAfterLsn?: bigint,
  markDelayMs?: number,
): Promise<void> {
  const relay = new StreamRelay(
    { stream, sink, store, logger: quietLogger, sleep: () => Promise.resolve() },
    { batchSize, retry: { initialDelayMs: 1, maxDelayMs: 1 }, startLsn: 5n, freshAfterLsn, markDelayMs },
  );
  return relay.run(new AbortController().signal);
}

/**
 * Slows every marking by 5 ms, so publishing runs ahead as far as the pipeline lets it, and records the most
 * batches or events (as `countSent` counts them) published and not yet marked.
 */
function watchSlowMarks(
  sink: RecordingSink,
  store: MemoryStore,
  countSent: () => number,
): { readonly most: number } {
  const watch = { most: 0 };
  const publish = sink.publish.bind(sink);
  sink.publish = async (records) => {
    const result = await publish(records);
    watch.most = Math.max(watch.most, countSent() - store.processed.size);
    return result;
  };
  const markProcessed = store.markProcessed.bind(store);
  store.markProcessed = async (records) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    await markProcessed(records);
  };
  return watch;
}

describe('StreamRelay', () => {
  it('publishes in stream order and confirms commit end LSNs after delivery', async () => {
    const stream = new ScriptedStream([
      begin(),
      record('a'),
      record('b'),
      { kind: 'commit', endLsn: 10n },
      begin(),
      record('c'),
      { kind: 'commit', endLsn: 20n },
    ]);
    const sink = new RecordingSink();
    const store = new MemoryStore();
    await run(stream, sink, store, 2);
    assert.deepEqual(sink.sent.flat(), ['a', 'b', 'c']);
    assert.deepEqual(stream.confirmed, [10n, 20n]);
    assert.deepEqual([...store.processed], ['a', 'b', 'c']);
  });

  it('skips events whose rows are already processed (replays) but still confirms them', async () => {
    const stream = new ScriptedStream([begin(), record('a'), record('b'), { kind: 'commit', endLsn: 10n }]);
    const sink = new RecordingSink();
    const store = new MemoryStore();
    store.processed.add('a');
    await run(stream, sink, store);
    assert.deepEqual(sink.sent, [['b']]);
    assert.deepEqual(stream.confirmed, [10n]);
  });

  it('checks rows of transactions committed up to freshAfterLsn, and no others', async () => {
    const stream = new ScriptedStream([
      begin(8n),
      record('caught-up'),
      { kind: 'commit', endLsn: 9n },
      begin(20n),
      record('fresh'),
      { kind: 'commit', endLsn: 21n },
    ]);
    const sink = new RecordingSink();
    const store = new MemoryStore();
    const checked: string[][] = [];
    const findFinished = store.findFinished.bind(store);
    store.findFinished = (ids) => {
      checked.push([...ids]);
      return findFinished(ids);
    };
    store.processed.add('caught-up');
    // One item per batch: the fresh transaction's batch holds only rows no one else can have delivered.
    await run(stream, sink, store, 1, 10n);
    assert.deepEqual(checked, [['caught-up']]);
    assert.deepEqual(sink.sent, [['fresh']]);
    assert.deepEqual(stream.confirmed.at(-1), 21n);
  });

  it('retries a batch that failed with a retriable error, in order, and confirms only afterwards', async () => {
    const stream = new ScriptedStream([begin(), record('a'), { kind: 'commit', endLsn: 10n }]);
    const sink = new RecordingSink();
    sink.failures = 3;
    await run(stream, sink, new MemoryStore());
    assert.deepEqual(sink.sent, [['a']]);
    assert.deepEqual(stream.confirmed, [10n]);
  });

  it('dead-letters rejected events and moves on', async () => {
    const stream = new ScriptedStream([
      begin(),
      record('ok'),
      record('huge'),
      { kind: 'commit', endLsn: 10n },
    ]);
    const store = new MemoryStore();
    await run(stream, new RecordingSink((r) => (r.id === 'huge' ? 'too large' : undefined)), store);
    assert.deepEqual([...store.processed], ['ok']);
    assert.deepEqual([...store.dead], ['huge']);
    assert.deepEqual(stream.confirmed, [10n]);
  });

  it('does not confirm an open transaction, and confirms idle keepalives', async () => {
    const open = new ScriptedStream([begin(), record('a'), { kind: 'keepalive', walEnd: 99n }]);
    await run(open, new RecordingSink(), new MemoryStore());
    assert.deepEqual(open.confirmed, []);
    const idle = new ScriptedStream([{ kind: 'keepalive', walEnd: 99n }]);
    await run(idle, new RecordingSink(), new MemoryStore());
    assert.deepEqual(idle.confirmed, [99n]);
  });

  it(
    'fails at once when a step fails and the stream has gone quiet (no next item to notice it)',
    { timeout: 5_000 },
    async () => {
      // The items end without the stream ending: a quiet database, where the next item may be seconds away.
      const items: StreamItem[] = [begin(), record('a'), { kind: 'commit', endLsn: 10n }];
      const quiet: ChangeStream = {
        next: () => Promise.resolve(items.shift() ?? new Promise<never>(() => undefined)),
        buffered: () => items.length,
        confirm: () => undefined,
        stopReceiving: () => Promise.resolve(),
      };
      const store = new MemoryStore();
      store.markProcessed = () => Promise.reject(new Error('permission denied for table outbox_events'));
      await assert.rejects(run(quiet, new RecordingSink(), store), /permission denied/);
    },
  );

  it('never has more than two batches published and not yet marked (the in-flight window)', async () => {
    const items: StreamItem[] = [];
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f'])
      items.push(begin(), record(id), { kind: 'commit', endLsn: 10n });
    const sink = new RecordingSink();
    const store = new MemoryStore();
    const unmarked = watchSlowMarks(sink, store, () => sink.sent.length);
    await run(new ScriptedStream(items), sink, store, 1);
    assert.equal(store.processed.size, 6);
    assert.ok(unmarked.most <= 2, `${unmarked.most} batches published and not marked`);
  });

  it('gathers the marks of small batches (steady traffic) into fewer statements, then confirms', async () => {
    const items: StreamItem[] = [];
    for (const [i, id] of ['a', 'b', 'c', 'd', 'e'].entries())
      items.push(begin(), record(id), { kind: 'commit', endLsn: BigInt(10 + i) });
    const confirmed: Lsn[] = [];
    const trickle = trickleStream(items, confirmed);
    const sink = new RecordingSink();
    const store = new MemoryStore();
    const markings: string[][] = [];
    const markProcessed = store.markProcessed.bind(store);
    store.markProcessed = (records) => {
      markings.push(records.map((r) => r.id));
      return markProcessed(records);
    };
    await run(trickle, sink, store, 10, undefined, 1_000);
    assert.deepEqual(sink.sent, [['a'], ['b'], ['c'], ['d'], ['e']]);
    assert.ok(
      markings.length < sink.sent.length,
      `${markings.length} markings for ${sink.sent.length} batches`,
    );
    assert.deepEqual(markings.flat(), ['a', 'b', 'c', 'd', 'e']);
    assert.equal(confirmed.at(-1), 14n);
  });

  it("lets small batches run ahead of their marking by two full batches' worth of events, no more", async () => {
    const items: StreamItem[] = [];
    for (let i = 0; i < 20; i++) items.push(begin(), record(`e${i}`), { kind: 'commit', endLsn: 10n });
    const trickle = trickleStream(items);
    const sink = new RecordingSink();
    const store = new MemoryStore();
    const unmarked = watchSlowMarks(sink, store, () => sink.sent.flat().length);
    // Batches of one event, --batch-size 3: up to six events may be published and not yet marked.
    await run(trickle, sink, store, 3, undefined, 0);
    assert.equal(store.processed.size, 20);
    const { most } = unmarked;
    assert.ok(most > 2, `small batches ran ahead of their marking (${most} events unmarked at most)`);
    assert.ok(most <= 6, `${most} events published and not marked`);
  });

  it('while the broker is slow, events that arrive meanwhile go out together, not a request each', async () => {
    // One event per transaction arrives every 2 ms, then the stream ends; the first publish takes 60 ms.
    const { stream, stop } = arrivingStream(20, 2);
    const sink = new RecordingSink();
    const publish = sink.publish.bind(sink);
    sink.publish = async (records) => {
      if (sink.sent.length === 0) await new Promise((resolve) => setTimeout(resolve, 60));
      return publish(records);
    };
    try {
      await run(stream, sink, new MemoryStore(), 100, undefined, 0);
    } finally {
      stop();
    }
    assert.equal(sink.sent.flat().length, 20);
    assert.ok(sink.sent.length < 10, `${sink.sent.length} requests for 20 events`);
  });

  it('paces partial batches at one request per linger; an event after a quiet spell goes at once', async () => {
    // Ten one-event transactions, one every 2 ms, then the stream ends.
    const { stream, stop } = arrivingStream(10, 2);
    const sink = new RecordingSink();
    const relay = new StreamRelay(
      { stream, sink, store: new MemoryStore(), logger: quietLogger, sleep: () => Promise.resolve() },
      { batchSize: 100, retry: { initialDelayMs: 1, maxDelayMs: 1 }, startLsn: 5n, lingerMs: 200 },
    );
    try {
      await relay.run(new AbortController().signal);
    } finally {
      stop();
    }
    assert.equal(sink.sent.flat().length, 10);
    assert.deepEqual(sink.sent[0], ['e0'], 'the first event, after a quiet spell, went alone and at once');
    assert.ok(sink.sent.length <= 3, `${sink.sent.length} requests for 10 events within one linger`);
  });

  it('stops on an error that is not retriable, without confirming', async () => {
    const stream = new ScriptedStream([begin(), record('a'), { kind: 'commit', endLsn: 10n }]);
    const sink: Sink = {
      publish: () => Promise.reject(new Error('bug')),
      publishDeadLetters: () => Promise.resolve(),
      topicOf: () => 'topic',
    };
    await assert.rejects(run(stream, sink, new MemoryStore()), /bug/);
    assert.deepEqual(stream.confirmed, []);
  });
});
