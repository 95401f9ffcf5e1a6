// Pure (no DOM): unit-tested in `npm test`.

/** Window span and bucket width of an interval value, in seconds. */
export interface IntervalMeaning {
  span: number;
  bucket: number;
}

/** Window span and bucket width of each interval value of a parameter, in seconds. */
export type IntervalMeanings = Readonly<Record<string, IntervalMeaning>>;

/** The shared time ranges the page offers, by the name kept in the URL, shortest first. */
const RANGES: ReadonlyArray<{ name: string; span: number; label: string }> = [
  { name: '5min', span: 300, label: 'last 5 minutes' },
  { name: '15min', span: 900, label: 'last 15 minutes' },
  { name: '30min', span: 1800, label: 'last 30 minutes' },
  { name: '1hr', span: 3600, label: 'last hour' },
  { name: '3hr', span: 10_800, label: 'last 3 hours' },
  { name: '1day', span: 86_400, label: 'last day' },
  { name: '3day', span: 259_200, label: 'last 3 days' },
  { name: '7day', span: 604_800, label: 'last 7 days' },
];

/**
 * A parameter as `GET /api/endpoints` describes it (the part the page reads): an interval
 * parameter carries what each of its values means (`intervals`), so the page knows no interval
 * table of its own and works for any endpoint's.
 */
export interface ParamDescription {
  name: string;
  values?: readonly string[];
  intervals?: IntervalMeanings;
}

/** The parameter that picks a window, when an endpoint has one: its description gives its values' meanings. */
export function intervalParam<P extends ParamDescription>(params: readonly P[]): P | null {
  return params.find((p) => p.intervals !== undefined && Object.keys(p.intervals).length > 0) ?? null;
}

/** The ranges some endpoint can show: those whose span one of the endpoints' intervals offers. */
export function rangeChoices(meanings: ReadonlyArray<IntervalMeanings>): Array<{ name: string; label: string }> {
  const spans = new Set(meanings.flatMap((m) => Object.values(m).map((i) => i.span)));
  return RANGES.filter((r) => spans.has(r.span)).map(({ name, label }) => ({ name, label }));
}

/** Seconds of a range name (`1day` -> 86400); an unknown name is a day. */
export function rangeSeconds(name: string): number {
  return RANGES.find((r) => r.name === name)?.span ?? 86_400;
}

/**
 * The interval of an endpoint for a shared range (docs/dashboard.md, "One time range"): one whose window is exactly the range, the
 * finest buckets first; else the shortest window that covers the range (the panel then shows
 * only the range of it); else the longest there is. Null when the endpoint described no interval.
 */
export function intervalFor(meanings: IntervalMeanings, range: number): ({ value: string } & IntervalMeaning) | null {
  const known = Object.entries(meanings).map(([value, meaning]) => ({ value, span: meaning.span, bucket: meaning.bucket }));
  if (known.length === 0) return null;
  const finest = (list: typeof known) => list.reduce<(typeof known)[number] | null>((best, i) => (best === null || i.bucket < best.bucket ? i : best), null);
  const exact = finest(known.filter((i) => i.span === range));
  if (exact) return exact;
  const covering = known.filter((i) => i.span > range);
  const shortest = Math.min(...covering.map((i) => i.span));
  return finest(covering.filter((i) => i.span === shortest)) ?? finest(known.filter((i) => i.span === Math.max(...known.map((k) => k.span))));
}

/** A chart's x range: whole buckets from `start` (inclusive) to `end` (exclusive), Unix seconds. */
export interface TimeWindow {
  start: number;
  end: number;
  bucket: number;
}

/**
 * The buckets of a range ending now, as the endpoints count them: from the bucket holding
 * `now - span` to the bucket holding `now`, whole. Buckets are UTC, so a bucket of a second,
 * minute, hour or day starts at a multiple of its width since the epoch.
 */
export function rangeWindow(nowMs: number, span: number, bucket: number): TimeWindow {
  const now = nowMs / 1000;
  const trunc = (t: number) => Math.floor(t / bucket) * bucket;
  return { start: trunc(now - span), end: trunc(now) + bucket, bucket };
}

/**
 * The window a panel draws its rows in. A panel whose interval covers more than the range
 * (`clip`) keeps only the buckets of the range; otherwise the window grows to hold every row,
 * so a row is never off the chart (usage.api-counts has no upper bound: events stamped after
 * now count too).
 */
export function windowForRows(window: TimeWindow, xs: readonly number[], clip: boolean): { window: TimeWindow; inside: (x: number) => boolean } {
  if (clip) return { window, inside: (x) => x >= window.start && x < window.end };
  const trunc = (t: number) => Math.floor(t / window.bucket) * window.bucket;
  const start = Math.min(window.start, ...xs.map(trunc));
  const end = Math.max(window.end, ...xs.map((x) => trunc(x) + window.bucket));
  return { window: { start, end, bucket: window.bucket }, inside: () => true };
}

/**
 * The server's clock as an offset from this browser's: the catalog's `since` is the server's
 * now minus `days`. The page adds it to `Date.now()`, so windows are the server's even when it
 * replays a fixed instant (`--now`) or the two clocks disagree.
 */
export function clockOffset(since: string, days: number, browserNowMs: number): number {
  const serverNow = Date.parse(since) + days * 86_400_000;
  return Number.isFinite(serverNow) ? serverNow - browserNowMs : 0;
}

/**
 * The `iso_timestamp_start` / `iso_timestamp_end` of logs.all that select exactly one bucket
 * (docs/dashboard.md, "A bucket's log entries"):
 * the start is exclusive (an entry must be later), so it is one microsecond (the timestamps'
 * precision) before the bucket; the end is inclusive, so it is the bucket's last microsecond.
 */
export function bucketBounds(startSeconds: number, bucketSeconds: number): { after: string; until: string } {
  const micros = startSeconds * 1_000_000;
  return { after: isoMicros(micros - 1), until: isoMicros(micros + bucketSeconds * 1_000_000 - 1) };
}

/** Microseconds since the epoch as ISO 8601 with six fractional digits, UTC. */
export function isoMicros(micros: number): string {
  const ms = Math.floor(micros / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(micros - ms * 1000).padStart(3, '0')}Z`;
}

/** A bucket by its start: `2026-11-21` (days), `2026-11-21 10:00` (hours, minutes), `2026-11-21 10:00:05` (seconds). */
export function bucketLabel(startSeconds: number, bucketSeconds: number): string {
  const text = new Date(startSeconds * 1000).toISOString().replace('T', ' ');
  if (bucketSeconds >= 86_400) return text.slice(0, 10);
  return bucketSeconds >= 60 ? text.slice(0, 16) : text.slice(0, 19);
}
