import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
}

/** The compiled CLI of this build (build/src/cli/main.js): the same code as the package's bin. */
export const CLI_PATH = join(__dirname, '..', '..', 'src', 'cli', 'main.js');

/**
 * Runs the walbox CLI in a child process with a clean environment: only what the test passes, so neither the
 * developer's WALBOX_* variables nor DATABASE_URL leak in.
 */
export function runCli(
  args: readonly string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  const started = Date.now();
  const env: Record<string, string> = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...options.env };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`walbox ${args.join(' ')} did not exit within ${options.timeoutMs ?? 60_000}ms`));
    }, options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, durationMs: Date.now() - started });
    });
  });
}
