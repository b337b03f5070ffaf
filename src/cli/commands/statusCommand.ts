import type { Argv, CommandModule } from 'yargs';

import { parseDuration } from '../../config/parseDuration.js';
import { ConfigError } from '../../errors.js';
import { describeDatabase } from '../../db/describeDatabase.js';
import { readOutboxStatus, type OutboxStatus } from '../../db/readOutboxStatus.js';
import { readSlotStatus, type SlotReader, type SlotStatus } from '../../db/readSlotStatus.js';
import { withCommandDatabase } from '../commandDatabase.js';
import { addConfigOptions, loadCommandConfig } from '../configOptions.js';
import { executeCommand } from '../executeCommand.js';
import { EXIT } from '../exitCodeFor.js';
import { formatBytes, formatSeconds, formatTable } from '../formatUnits.js';

interface StatusArgs {
  json?: boolean;
  maxPendingAge?: string;
}

/** What `walbox status --json` prints (its shape is covered by a test: scripts may rely on it). */
export interface StatusReport {
  readonly healthy: boolean;
  /** Why not healthy, one sentence each. */
  readonly problems: readonly string[];
  readonly mode: 'wal' | 'poll';
  readonly database: string;
  readonly table: string;
  /** WAL mode only. */
  readonly slot: SlotStatus | null;
  readonly outbox: OutboxStatus;
}

/** Unhealthy: the slot cannot stream, events are stuck, or events were given up on. */
export function findProblems(
  slot: SlotStatus | null,
  outbox: OutboxStatus,
  maxPendingAgeSeconds: number,
): string[] {
  const problems: string[] = [];
  if (slot !== null) {
    if (!slot.exists) problems.push(`replication slot ${slot.slot} does not exist (is the relay running?)`);
    else if (slot.walStatus === 'lost')
      problems.push(`replication slot ${slot.slot} was invalidated: the relay recreates it and catches up`);
    else if (!slot.active)
      problems.push(`replication slot ${slot.slot} is not active (is the relay running?)`);
    if (slot.walStatus === 'unreserved')
      problems.push(`replication slot ${slot.slot} is about to be invalidated (wal_status unreserved)`);
  }
  if (outbox.oldestPendingAgeSeconds > maxPendingAgeSeconds) {
    problems.push(`the oldest pending event waits for ${formatSeconds(outbox.oldestPendingAgeSeconds)}`);
  }
  if (outbox.deadLetters > 0)
    problems.push(`${String(outbox.deadLetters)} dead letters (see walbox dlq list)`);
  return problems;
}

export const statusCommand: CommandModule<object, StatusArgs> = {
  command: 'status',
  describe: 'show slot, lag, pending events and dead letters; exit 3 when unhealthy',
  builder: (yargs: Argv) =>
    addConfigOptions(yargs, 'status')
      .option('json', { type: 'boolean', description: 'print JSON for scripts' })
      .option('max-pending-age', {
        type: 'string',
        description: 'unhealthy when the oldest pending event is older [default 5m]',
      }),
  handler: (argv) =>
    executeCommand('status', async () => {
      const config = loadCommandConfig(argv, 'status');
      const maxPendingAgeMs = parseDuration(argv.maxPendingAge ?? '5m');
      if (maxPendingAgeMs === undefined) {
        throw new ConfigError(
          `--max-pending-age ${argv.maxPendingAge ?? ''} is not a duration (e.g. 5m, 90s)`,
        );
      }
      const report = await withCommandDatabase(config, 'status', async (client): Promise<StatusReport> => {
        const slot = config.mode === 'wal' ? await readSlotStatus(client, config.slot) : null;
        const outbox = await readOutboxStatus(client, config.schema, config.table);
        const problems = findProblems(slot, outbox, maxPendingAgeMs / 1000);
        return {
          healthy: problems.length === 0,
          problems,
          mode: config.mode,
          database: describeDatabase(config.databaseUrl ?? ''),
          table: `${config.schema}.${config.table}`,
          slot,
          outbox,
        };
      });
      process.stdout.write(
        argv.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report),
      );
      return report.healthy ? EXIT.OK : EXIT.PRECONDITION;
    }),
};

function formatReport(report: StatusReport): string {
  const rows: [string, string][] = [];
  const { slot, outbox } = report;
  if (slot !== null) {
    rows.push(['slot', describeSlot(slot)]);
    if (slot.activeReader !== null)
      rows.push(['active relay', describeReader(slot.activeReader, Date.now())]);
    if (slot.exists) {
      rows.push(['lag', formatBytes(slot.lagBytes)]);
      rows.push(['retained WAL', formatBytes(slot.retainedWalBytes)]);
      rows.push(['wal_status', slot.walStatus ?? '—']);
      rows.push([
        'safe_wal_size',
        slot.safeWalSizeBytes === null ? 'unlimited' : formatBytes(slot.safeWalSizeBytes),
      ]);
    }
  }
  rows.push(['pending', String(outbox.pending)]);
  rows.push(['oldest pending', outbox.pending === 0 ? '—' : formatSeconds(outbox.oldestPendingAgeSeconds)]);
  rows.push(['dead letters', String(outbox.deadLetters)]);
  rows.push(['health', report.healthy ? 'OK' : 'UNHEALTHY']);
  const problems = report.problems.map((p) => `  - ${p}\n`).join('');
  return `walbox status: ${report.table} on ${report.database} (${report.mode} mode)\n${formatTable(rows)}${problems}`;
}

function describeSlot(slot: SlotStatus): string {
  if (!slot.exists) return `${slot.slot}: missing`;
  return `${slot.slot}: ${slot.active ? `active (pid ${String(slot.activePid)})` : 'inactive'}`;
}

/** With standby relays, which one streams: `walbox from 10.1.2.3 (pid 4711, connected 3h 5m ago)`. */
function describeReader(reader: SlotReader, now: number): string {
  const since =
    reader.backendStart === null
      ? ''
      : `, connected ${formatSeconds(Math.max(0, now - Date.parse(reader.backendStart)) / 1000)} ago`;
  return `${reader.applicationName ?? 'unknown'} from ${reader.clientAddr ?? 'a local socket'} (pid ${String(reader.pid)}${since})`;
}
