/**
 * A deliberately naive, independent implementation of the three endpoints, written from the
 * rules of docs/semantics.md alone: it parses the NDJSON files itself and loops over plain objects. No SQL,
 * no DuckDB and none of the library's own parsing or time helpers, so a shared mistake is unlikely.
 * Only the differential test uses it.
 */
import { readFileSync } from 'node:fs';
import type { FunctionsInvocationStatsRow, LogsAllRow, UsageApiCountsRow } from '../../src/index';

type Micros = bigint;

const SECOND = 1_000_000n;
const MINUTE = 60n * SECOND;
const HOUR = 60n * MINUTE;
const DAY = 24n * HOUR;

// ---------------------------------------------------------------------------------------------
// Events

export interface RefEdgeEvent {
  id: string | null;
  ts: Micros | null;
  event_message: string | null;
  project: string | null;
  metadata: Record<string, unknown> | null;
  path: string | null;
  url: string | null;
}

export interface RefFunctionEvent {
  ts: Micros | null;
  project_ref: string | null;
  function_id: string | null;
  execution_time_ms: number | null;
  status_code: number | null;
}

export interface Parsed<E> {
  events: E[];
  /** Lines that are not a JSON object. */
  skipped: number;
}

/** Every non-blank line that parses as a JSON object; the others are counted and skipped. */
function readObjects(files: readonly string[]): Parsed<Record<string, unknown>> {
  const events: Record<string, unknown>[] = [];
  let skipped = 0;
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        // A timestamp integer past 2^53 (nanoseconds) would lose digits in a double: keep its text.
        value = JSON.parse(line.replace(/("timestamp"\s*:\s*)(-?\d{16,})(?=\s*[,}])/, '$1"$2"'));
      } catch {
        skipped++;
        continue;
      }
      if (isObject(value)) events.push(value);
      else skipped++;
    }
  }
  return { events, skipped };
}

export function readEdgeEvents(files: readonly string[]): Parsed<RefEdgeEvent> {
  const { events, skipped } = readObjects(files);
  return {
    skipped,
    events: events.map((e) => {
      const metadata = isObject(e.metadata) ? e.metadata : null;
      const request = metadata && isObject(metadata.request) ? metadata.request : null;
      return {
        id: str(e.id),
        ts: eventTime(e.timestamp),
        event_message: str(e.event_message),
        project: str(e.project),
        metadata,
        path: request ? str(request.path) : null,
        url: request ? str(request.url) : null,
      };
    }),
  };
}

export function readFunctionEvents(files: readonly string[]): Parsed<RefFunctionEvent> {
  const { events, skipped } = readObjects(files);
  return {
    skipped,
    events: events.map((e) => {
      const m = isObject(e.metadata) ? e.metadata : {};
      const response = isObject(m.response) ? m.response : {};
      return {
        ts: eventTime(e.timestamp),
        project_ref: str(m.project_ref),
        function_id: str(m.function_id),
        execution_time_ms: typeof m.execution_time_ms === 'number' ? m.execution_time_ms : null,
        status_code: typeof response.status_code === 'number' ? response.status_code : null,
      };
    }),
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

// ---------------------------------------------------------------------------------------------
// Time (docs/semantics.md, "Timestamps" and "Values in results"), written out by hand

/**
 * A number (or numeric string) since the epoch, its unit by magnitude: below 1e11 seconds, below
 * 1e14 milliseconds, below 1e17 microseconds, else nanoseconds; floored to microseconds. Any other
 * string is ISO 8601; anything else has no time.
 */
function eventTime(v: unknown): Micros | null {
  const text = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : null) : typeof v === 'string' ? v.trim() : null;
  if (text === null) return null;
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(text);
  if (!m) return typeof v === 'string' ? parseIso(v) : null;
  // The value is digits * 10^(exp - fraction length); the unit by the count of its integer digits.
  const [, sign, whole = '0', fraction = '', exp = '0'] = m;
  const digits = BigInt(whole + fraction);
  let power = Number(exp) - fraction.length;
  const magnitudeDigits = whole.replace(/^0+/, '').length + Number(exp);
  const scale = magnitudeDigits <= 11 ? 6 : magnitudeDigits <= 14 ? 3 : magnitudeDigits <= 17 ? 0 : -3; // to microseconds
  power += scale;
  let micros: bigint;
  if (power >= 0) micros = digits * 10n ** BigInt(power);
  else {
    const d = 10n ** BigInt(-power);
    micros = digits / d;
    if (sign === '-' && digits % d !== 0n) micros += 1n; // floor for negatives
  }
  return sign === '-' ? -micros : micros;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/** ISO 8601 with an optional offset (UTC when absent); fractions past microseconds are cut off. */
export function parseIso(text: string): Micros | null {
  const m = ISO.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  let offsetMinutes = 0n;
  if (zone !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const minutes = BigInt(digits.slice(0, 2)) * 60n + BigInt(digits.slice(2) || '0');
    offsetMinutes = zone[0] === '-' ? -minutes : minutes;
  }
  const days = daysFromCivil(Number(y), Number(mo), Number(d));
  const seconds = BigInt(days) * 86400n + BigInt(h) * 3600n + BigInt(mi) * 60n + BigInt(s);
  return seconds * SECOND + BigInt(frac.padEnd(6, '0').slice(0, 6)) - offsetMinutes * MINUTE;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
export function formatIso(t: Micros): string {
  const day = floorDiv(t, DAY);
  let rest = t - day * DAY;
  const [y, mo, d] = civilFromDays(Number(day));
  const hh = rest / HOUR;
  rest -= hh * HOUR;
  const mi = rest / MINUTE;
  rest -= mi * MINUTE;
  const ss = rest / SECOND;
  rest -= ss * SECOND;
  const p = (n: number | bigint, w = 2) => String(n).padStart(w, '0');
  return `${p(y, 4)}-${p(mo)}-${p(d)}T${p(hh)}:${p(mi)}:${p(ss)}.${p(rest, 6)}Z`;
}

function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** UTC has no leap seconds in Unix time, so every unit divides the epoch evenly. */
function trunc(t: Micros, unit: Micros): Micros {
  return floorDiv(t, unit) * unit;
}

const nowMicros = (now: Date): Micros => BigInt(now.getTime()) * 1000n;

/** Absent and empty are the same (docs/semantics.md, "Parameters"). */
function given(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

// ---------------------------------------------------------------------------------------------
// §3.1 functions.invocation-stats

const INVOCATION_INTERVALS: Record<string, { span: Micros; unit: Micros }> = {
  '5min': { span: 5n * MINUTE, unit: SECOND },
  '15min': { span: 15n * MINUTE, unit: MINUTE },
  '1hr': { span: HOUR, unit: MINUTE },
  '1day': { span: DAY, unit: HOUR },
  '7day': { span: 7n * DAY, unit: DAY },
};

export interface RefInvocationRow extends FunctionsInvocationStatsRow {}

export interface RefInvocationResult {
  rows: RefInvocationRow[];
  /** Per row, the execution times of the bucket, sorted ascending (for the p95/p99 bound). */
  sortedTimes: number[][];
}

export function refInvocationStats(events: readonly RefFunctionEvent[], params: { project: string; function_id?: string; interval: string }, now: Date): RefInvocationResult {
  const { span, unit } = INVOCATION_INTERVALS[params.interval] ?? INVOCATION_INTERVALS['1day']!;
  const n = nowMicros(now);
  const first = trunc(n - span, unit);
  const end = trunc(n, unit) + unit;
  const functionId = given(params.function_id);
  const buckets = new Map<Micros, { times: number[]; count: number; errors: number }>();
  for (const e of events) {
    if (e.ts === null || e.project_ref !== params.project) continue;
    if (functionId !== undefined && e.function_id !== functionId) continue;
    if (!(first <= e.ts && e.ts < end)) continue;
    const key = trunc(e.ts, unit);
    let b = buckets.get(key);
    if (!b) buckets.set(key, (b = { times: [], count: 0, errors: 0 }));
    b.count++;
    if (e.status_code !== null && e.status_code >= 400) b.errors++;
    if (e.execution_time_ms !== null) b.times.push(e.execution_time_ms);
  }
  const keys = [...buckets.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).slice(0, 1000);
  const rows: RefInvocationRow[] = [];
  const sortedTimes: number[][] = [];
  for (const key of keys) {
    const b = buckets.get(key)!;
    const sorted = [...b.times].sort((x, y) => x - y);
    const has = sorted.length > 0;
    rows.push({
      timestamp: formatIso(key),
      min_execution_time: has ? sorted[0]! : null,
      max_execution_time: has ? sorted[sorted.length - 1]! : null,
      avg_execution_time: has ? sorted.reduce((s, x) => s + x, 0) / sorted.length : null,
      p95_execution_time: has ? nearestRank(sorted, 0.95) : null,
      p99_execution_time: has ? nearestRank(sorted, 0.99) : null,
      count: b.count,
      error_count: b.errors,
    });
    sortedTimes.push(sorted);
  }
  return { rows, sortedTimes };
}

function nearestRank(sorted: readonly number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

/**
 * The accuracy bound of docs/semantics.md, "functions.invocation-stats", for pN (q = 0.95 or 0.99) over n sorted values v1..vn:
 * [v_lo, v_hi] with lo = max(1, floor((q - 0.01) n)), hi = min(n, ceil((q + 0.01) n)).
 * Computed in integer hundredths so float rounding cannot widen or narrow it.
 */
export function quantileBound(sorted: readonly number[], percent: 95 | 99): [number, number] {
  const n = sorted.length;
  const lo = Math.max(1, Math.floor(((percent - 1) * n) / 100));
  const hi = Math.min(n, Math.ceil(((percent + 1) * n) / 100));
  return [sorted[lo - 1]!, sorted[hi - 1]!];
}

// ---------------------------------------------------------------------------------------------
// §3.2 logs.all

const RETENTION: Record<string, Micros> = { FREE: DAY, PRO: 7n * DAY, PAYG: 90n * DAY, ENTERPRISE: 90n * DAY };

export function refLogsAll(events: readonly RefEdgeEvent[], params: { project: string; project_tier?: string; iso_timestamp_start?: string; iso_timestamp_end?: string }, now: Date): LogsAllRow[] {
  const retainedAfter = nowMicros(now) - (RETENTION[params.project_tier ?? 'FREE'] ?? DAY);
  const startText = given(params.iso_timestamp_start);
  const endText = given(params.iso_timestamp_end);
  const start = startText === undefined ? null : mustParse(startText);
  const end = endText === undefined ? null : mustParse(endText);
  if (start !== null && end !== null && start > end) throw new Error('reference: iso_timestamp_start is after iso_timestamp_end');
  const picked = events.filter((e) => e.ts !== null && e.project === params.project && e.ts > retainedAfter && (start === null || e.ts > start) && (end === null || e.ts <= end));
  picked.sort((a, b) => (a.ts! > b.ts! ? -1 : a.ts! < b.ts! ? 1 : compareIds(a.id, b.id)));
  return picked.slice(0, 100).map((e) => ({
    id: e.id,
    timestamp: formatIso(e.ts!),
    event_message: e.event_message,
    metadata: e.metadata,
  }));
}

function mustParse(text: string): Micros {
  const t = parseIso(text);
  if (t === null) throw new Error(`reference: not an ISO timestamp: ${text}`);
  return t;
}

/** Code point order (what byte order of UTF-8 gives), missing ids last. */
export function compareIds(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  const x = [...a],
    y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

// ---------------------------------------------------------------------------------------------
// §3.3 usage.api-counts

const USAGE_INTERVALS: Record<string, { span: Micros; unit: Micros }> = {
  hourly: { span: HOUR, unit: HOUR },
  daily: { span: 7n * DAY, unit: DAY },
  minutely: { span: 60n * MINUTE, unit: MINUTE },
  '15min': { span: 15n * MINUTE, unit: MINUTE },
  '30min': { span: 30n * MINUTE, unit: MINUTE },
  '1hr': { span: HOUR, unit: MINUTE },
  '3hr': { span: 3n * HOUR, unit: HOUR },
  '1day': { span: DAY, unit: HOUR },
  '3day': { span: 3n * DAY, unit: HOUR },
  '7day': { span: 7n * DAY, unit: DAY },
};

export function refUsageApiCounts(events: readonly RefEdgeEvent[], params: { project: string; interval: string }, now: Date): UsageApiCountsRow[] {
  const interval = USAGE_INTERVALS[params.interval];
  if (!interval) throw new Error(`reference: interval must be one of ${Object.keys(USAGE_INTERVALS).join(', ')}`);
  const start = nowMicros(now) - interval.span;
  // JS RegExp stands in for RE2: the patterns the tests use mean the same in both.
  const pattern = new RegExp(params.project);
  const buckets = new Map<Micros, UsageApiCountsRow>();
  for (const e of events) {
    if (e.ts === null || e.ts < start || e.url === null || !pattern.test(e.url)) continue;
    const key = trunc(e.ts, interval.unit);
    let row = buckets.get(key);
    if (!row) {
      row = { timestamp: formatIso(key), total_rest_requests: 0, total_storage_requests: 0, total_auth_requests: 0, total_realtime_requests: 0 };
      buckets.set(key, row);
    }
    const path = e.path ?? '';
    if (path.includes('/rest')) row.total_rest_requests++;
    if (path.includes('/storage')) row.total_storage_requests++;
    if (path.includes('/auth')) row.total_auth_requests++;
    if (path.includes('/realtime')) row.total_realtime_requests++;
  }
  return [...buckets.keys()]
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, 1000)
    .map((k) => buckets.get(k)!);
}
