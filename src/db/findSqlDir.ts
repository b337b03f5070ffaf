import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The package's sql/ folder. Compiled code lives in dist/ (the package) or build/src/ (the tests), so walk up
 * from this file instead of hard-coding the depth.
 */
export function findSqlDir(start: string = __dirname): string {
  for (let dir = start; ; dir = dirname(dir)) {
    const candidate = join(dir, 'sql');
    if (existsSync(join(candidate, '000001_create_outbox.sql'))) return candidate;
    if (dirname(dir) === dir)
      throw new Error(`walbox: no sql/ folder above ${start}; the package is incomplete`);
  }
}
