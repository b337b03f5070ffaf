import { appendFileSync } from 'node:fs';

import { reportDelivery } from './deliveryReport.js';
import { writeLoad, type WrittenEvent } from './outboxWriter.js';
import type { RelayProcess } from './relayProcess.js';
import { withRelaySetup, type RelaySetup } from './relaySetup.js';
import type { ConsumedMessage } from './topicReader.js';

export type RelayMode = 'wal' | 'poll';

export interface ScenarioResult {
  readonly scenario: string;
  readonly mode: RelayMode;
  readonly committed: number;
  readonly lost: number;
  readonly phantom: number;
  readonly reordered: number;
  readonly duplicates: number;
  readonly peakLagBytes: number;
  /** Peak WAL the slot kept (current WAL position − restart_lsn). */
  readonly peakRetainedBytes: number;
  /** Relay log lines that contain the database password: must be none. */
  readonly leakedSecrets: number;
}

export interface FaultContext {
  readonly setup: RelaySetup;
  readonly mode: RelayMode;
  /** The relay running now (replaced by restartRelay). */
  relay(): RelayProcess;
  /** Starts a relay of the scenario's mode (after the previous one exited) and waits until it works. */
  restartRelay(): Promise<RelayProcess>;
  /** Makes `relay` (started by the scenario itself) the current one. */
  adopt(relay: RelayProcess): void;
  /** True until the writers are done. */
  loading(): boolean;
  /** Events the scenario committed itself (besides the writers'), for the checker. */
  addCommitted(events: readonly WrittenEvent[]): void;
  /** Messages the scenario read before it destroyed them (a deleted topic), for the checker. */
  addDelivered(messages: readonly ConsumedMessage[]): void;
}

export const BATCH_SIZE = 100;

/**
 * Runs one fault scenario: a relay of `mode`, writers committing events for ~10 s, and `inject` doing harm
 * meanwhile; then checks what reached Kafka with an independent consumer (lost, phantom, reordered, duplicates)
 * and samples the slot's lag throughout. The result row is printed and, with FAULT_RESULTS set, appended there.
 */
export async function runFaultScenario(options: {
  readonly scenario: string;
  readonly mode: RelayMode;
  readonly inject: (context: FaultContext) => Promise<void>;
  readonly relayArgs?: readonly string[];
  /** Environment of the relay processes (e.g. a test-only preload that breaks the relay on purpose). */
  readonly relayEnv?: Record<string, string>;
  /** Print and record the result row (off for a deliberately broken relay). */
  readonly record?: boolean;
  /** How long the checker waits for every committed event (a broken relay never delivers them all). */
  readonly checkTimeoutMs?: number;
  /** The database of the fixture, the relays and the writers (default: the stack's cluster). */
  readonly databaseUrl?: string;
  /** The writers' load, when the fault needs longer than the usual ~10 s of writes. */
  readonly load?: { readonly events: number; readonly pauseMs: number; readonly until?: () => boolean };
  /** Receives every message the checker read (e.g. to time the first delivery after a fault). */
  readonly onDelivered?: (messages: readonly ConsumedMessage[]) => void;
}): Promise<ScenarioResult> {
  let result: ScenarioResult | undefined;
  await withRelaySetup(
    async (setup) => {
      const args = ['--mode', options.mode, '--poll-interval', '200ms', ...(options.relayArgs ?? [])];
      const ready = options.mode === 'wal' ? /streaming from the replication slot/ : /polling the outbox/;
      let current = setup.startRelay(...args);
      await current.waitForLine(ready);
      let peakLag = 0;
      let peakRetained = 0;
      const done = new AbortController();
      const sampler = (async () => {
        while (!done.signal.aborted) {
          const lag = await setup.fixture.slotLagBytes().catch(() => Number.NaN);
          if (Number.isFinite(lag)) peakLag = Math.max(peakLag, lag);
          const retained = await setup.fixture.slotRetainedBytes().catch(() => Number.NaN);
          if (Number.isFinite(retained)) peakRetained = Math.max(peakRetained, retained);
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      })();
      const load = writeLoad({
        schema: setup.fixture.schema,
        aggregateType: 'order',
        writers: 4,
        events: options.load?.events ?? 4_000,
        aggregates: 200,
        pauseMs: options.load?.pauseMs ?? 30,
        survivesOutages: true,
        databaseUrl: setup.fixture.databaseUrl,
        rollbackRatio: 0.1,
        savepointRollbackRatio: 0.05,
        until: options.load?.until,
      }).finally(() => done.abort());
      const extraCommitted: WrittenEvent[] = [];
      const extraDelivered: ConsumedMessage[] = [];
      const context: FaultContext = {
        setup,
        mode: options.mode,
        relay: () => current,
        restartRelay: async () => {
          current = setup.startRelay(...args);
          await current.waitForLine(ready, 120_000);
          return current;
        },
        adopt: (relay) => {
          current = relay;
        },
        loading: () => !done.signal.aborted,
        addCommitted: (events) => extraCommitted.push(...events),
        addDelivered: (messages) => extraDelivered.push(...messages),
      };
      await options.inject(context);
      const written: { committed: WrittenEvent[] } = await load;
      const committed = [...written.committed, ...extraCommitted];
      await sampler;
      if (current.child.exitCode !== null || current.child.signalCode !== null) await context.restartRelay();
      const topic = await setup.reader();
      // Events read before their topic was deleted are not on the topic any more: wait for the others.
      const seenBefore = new Set(extraDelivered.map((m) => m.headers['id']));
      await topic
        .waitForIds(
          committed.map((e) => e.id).filter((id) => !seenBefore.has(id)),
          options.checkTimeoutMs ?? 180_000,
        )
        .catch(() => undefined);
      options.onDelivered?.([...extraDelivered, ...topic.messages]);
      const report = reportDelivery(committed, [...extraDelivered, ...topic.messages]);
      const password = new URL(setup.fixture.databaseUrl).password;
      const leakedSecrets = setup.relays.flatMap((r) => r.lines).filter((l) => l.includes(password)).length;
      result = {
        scenario: options.scenario,
        mode: options.mode,
        committed: report.committed,
        lost: report.lost.length,
        phantom: report.phantom.length,
        reordered: report.reordered.length,
        duplicates: report.duplicates,
        peakLagBytes: peakLag,
        peakRetainedBytes: peakRetained,
        leakedSecrets,
      };
    },
    { batchSize: BATCH_SIZE, relayEnv: options.relayEnv, databaseUrl: options.databaseUrl },
  );
  if (result === undefined) throw new Error(`scenario ${options.scenario} produced no result`);
  if (options.record === false) return result;
  const line = formatResultRow(result);
  console.log(line);
  const file = process.env['FAULT_RESULTS'];
  if (file !== undefined && file !== '') appendFileSync(file, `${line}\n`);
  return result;
}

export function formatResultRow(r: ScenarioResult): string {
  const mib = (bytes: number): string =>
    r.mode === 'poll' ? '—' : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `| ${r.scenario} | ${r.mode} | ${r.committed} | ${r.lost} | ${r.phantom} | ${r.reordered} | ${r.duplicates} | ${mib(r.peakLagBytes)} | ${mib(r.peakRetainedBytes)} |`;
}
