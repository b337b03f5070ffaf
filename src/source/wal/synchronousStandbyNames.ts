/**
 * The standby names in a synchronous_standby_names setting: `s1, s2`, `FIRST 1 (s1, "s 2")`, `ANY 2 (*)` or
 * `2 (s1, s2)`. Names are unquoted; unquoted names are folded to lower case, as PostgreSQL compares them.
 */
export function listSynchronousStandbyNames(setting: string): string[] {
  const body = /^\s*(?:(?:first|any)\s+)?(?:\d+\s*)?\((.*)\)\s*$/is.exec(setting)?.[1] ?? setting;
  const names: string[] = [];
  for (const match of body.matchAll(/\s*("(?:[^"]|"")*"|[^,]+)\s*(?:,|$)/g)) {
    const raw = (match[1] ?? '').trim();
    if (raw === '') continue;
    names.push(raw.startsWith('"') ? raw.slice(1, -1).replace(/""/g, '"') : raw.toLowerCase());
  }
  return names;
}

/**
 * Whether a walsender with this application_name can be chosen as a synchronous standby. PostgreSQL considers
 * logical walsenders too: commits would then wait for walbox's confirmation, which waits for walbox's own
 * commits (marking rows processed): every commit in the database hangs.
 */
export function mayBecomeSynchronousStandby(setting: string, applicationName: string): boolean {
  return listSynchronousStandbyNames(setting).some(
    (name) => name === '*' || name.toLowerCase() === applicationName.toLowerCase(),
  );
}
