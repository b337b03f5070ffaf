import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * walbox's version from its package.json, found by walking up from this file (dist/ in the package, build/src/
 * in the tests); `unknown` when the package is incomplete: a metric label is no reason to fail.
 */
export function readPackageVersion(start: string = __dirname): string {
  for (let dir = start; dirname(dir) !== dir; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
    if (parsed.name === 'walbox' && typeof parsed.version === 'string') return parsed.version;
  }
  return 'unknown';
}
