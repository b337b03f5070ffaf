import { spawn, type ChildProcess } from 'node:child_process';

import { CLI_PATH } from './runCli.js';
import { waitFor } from './waitFor.js';

export interface RelayProcess {
  readonly child: ChildProcess;
  /** Every stdout and stderr line so far. */
  readonly lines: string[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `walbox run` as a child process (the built CLI, as users run it) with a clean environment. */
export function startRelayProcess(args: readonly string[], env: Record<string, string> = {}): RelayProcess {
  const child = spawn(process.execPath, [CLI_PATH, 'run', ...args], {
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
    });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    lines,
    exited,
    async waitForLine(pattern, timeoutMs = 60_000) {
      await waitFor(() => lines.some((l) => pattern.test(l)), {
        timeoutMs,
        what: `relay output matching ${String(pattern)}; so far:\n${lines.slice(-20).join('\n')}`,
      });
      return lines.find((l) => pattern.test(l)) ?? '';
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
