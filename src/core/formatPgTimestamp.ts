/*
 * timestamptz output with DateStyle ISO: `YYYY-MM-DD HH:MM:SS[.ffffff]±HH[:MM[:SS]]`. PostgreSQL drops trailing
 * zeros of the fraction (and the fraction when it is zero), prints the offset of the session's TimeZone (minutes
 * and seconds only when non-zero, e.g. +00:19:32 for Amsterdam before 1937), appends ` BC` for BC years and can
 * print years beyond 9999.
 */
const PG_TIMESTAMPTZ =
  /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?([+-])(\d{2})(?::(\d{2}))?(?::(\d{2}))?$/;
const SECONDS_PER_DAY = 86_400;
const DOT = 46;

/**
 * Converts PostgreSQL timestamptz text (DateStyle ISO, any offset) into ISO 8601 UTC with exactly six
 * fractional digits: `2026-12-02 14:37:28.1234+02` → `2026-12-02T12:37:28.123400Z`. The microseconds are kept
 * as digits, never passed through a Date (milliseconds). `infinity`, BC dates, other DateStyles and results
 * outside years 0001–9999 are returned unchanged: better the server's text than a wrong instant.
 */
export function toIsoTimestamp(pgText: string): string {
  const fractionEnd = findFractionEnd(pgText);
  if (fractionEnd !== undefined && lastSecond !== undefined && isSecondOf(lastSecond, pgText, fractionEnd)) {
    return `${lastSecond.utc}.${pgText.slice(20, fractionEnd).padEnd(6, '0')}Z`;
  }
  const converted = convertToIsoTimestamp(pgText);
  if (converted === undefined) return pgText;
  if (fractionEnd !== undefined) {
    lastSecond = { head: pgText.slice(0, 19), tail: pgText.slice(fractionEnd), utc: converted.slice(0, 19) };
  }
  return converted;
}

/**
 * The whole second of the last text converted, before and after its fraction, and in UTC: events written close
 * together share it, and the conversion (a regular expression, calendar arithmetic, a dozen strings) cost a few
 * µs per event in a WAL drain.
 */
let lastSecond: ConvertedSecond | undefined;

interface ConvertedSecond {
  /** `YYYY-MM-DD HH:MM:SS` and the offset of the text, and `YYYY-MM-DDTHH:MM:SS` in UTC. */
  readonly head: string;
  readonly tail: string;
  readonly utc: string;
}

/** Where the `.ffffff` after `YYYY-MM-DD HH:MM:SS` ends (19 without one); undefined if not 1–6 digits. */
function findFractionEnd(text: string): number | undefined {
  if (text.charCodeAt(19) !== DOT) return 19;
  let end = 20;
  while (end <= 26 && isAsciiDigit(text.charCodeAt(end))) end++;
  return end === 20 || end > 26 ? undefined : end;
}

/**
 * Whether `text` is a converted text with another fraction: the same date and time to the second and the same
 * offset. That text matched PG_TIMESTAMPTZ and its offset starts with a sign, so this one does too.
 */
function isSecondOf({ head, tail }: ConvertedSecond, text: string, fractionEnd: number): boolean {
  return text.length === fractionEnd + tail.length && text.startsWith(head) && text.endsWith(tail);
}

export function isAsciiDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** toIsoTimestamp without the shortcut; undefined where the text is to be kept as it is. */
function convertToIsoTimestamp(pgText: string): string | undefined {
  const match = PG_TIMESTAMPTZ.exec(pgText);
  if (match === null) return undefined;
  const [
    ,
    year,
    month,
    day,
    hour,
    minute,
    second,
    fraction = '',
    sign,
    offsetH,
    offsetM = '0',
    offsetS = '0',
  ] = match;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  const h = Number(hour);
  const mi = Number(minute);
  const s = Number(second);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) return undefined;
  const offset = (Number(offsetH) * 3600 + Number(offsetM) * 60 + Number(offsetS)) * (sign === '-' ? -1 : 1);

  // Whole seconds since 1970 fit a double exactly for every 4-digit year; the fraction never takes part.
  const local = daysFromCivil(y, mo, d) * SECONDS_PER_DAY + h * 3600 + mi * 60 + s;
  const utc = local - offset;
  const days = Math.floor(utc / SECONDS_PER_DAY);
  const secondOfDay = utc - days * SECONDS_PER_DAY;
  const [uy, um, ud] = civilFromDays(days);
  if (uy < 1 || uy > 9999) return undefined;
  const time = [Math.floor(secondOfDay / 3600), Math.floor((secondOfDay % 3600) / 60), secondOfDay % 60];
  return (
    `${pad(uy, 4)}-${pad(um, 2)}-${pad(ud, 2)}T${time.map((part) => pad(part, 2)).join(':')}` +
    `.${fraction.padEnd(6, '0')}Z`
  );
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The inverse of daysFromCivil. */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return [year, month, day];
}
