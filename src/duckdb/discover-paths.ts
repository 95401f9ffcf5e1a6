import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceDescriptor } from '../sources/source-descriptor';
import { declaredSourceOf, DISCOVERED_PATHS_LIMIT, TYPED_PATH, withTypedPaths } from '../sources/typed-fields';
import { jsonPathLiteral } from './typed-columns';

// Discovered typed fields (docs/durability.md, "Typed columns"): compaction looks at the events of
// a run for the scalar fields nearly all of them hold with one type, and keeps each as a typed
// column as if the source declared it. A sample of the run proposes paths; one pass over every
// event of the run decides, so the same run discovers the same paths whatever the sample was.

/** The share of a run's events a path must be present in, with one scalar type in all of them. */
export const DISCOVERY_SHARE = 0.9;

/**
 * The most distinct values a discovered path may hold, as a share of the run's events (counted by
 * `approx_count_distinct`, whose memory is fixed). Why: a column is kept twice (its text and its
 * JSON), and what a dashboard filters, charts and groups by has few values (a status, a level, a
 * host), while a field of nearly one value per event (a timestamp, an id, a message) would make
 * every file larger for a column no query groups by.
 */
export const DISCOVERY_DISTINCT_SHARE = 0.05;

/**
 * The fewest events a run must hold to discover paths: the set only grows, so a handful of events
 * (a test's, a quiet hour's) must not fill the bound with what they happen to hold.
 */
export const DISCOVERY_MIN_EVENTS = 1000;

/** Events the sample reads; a path in at least half of them is a candidate. */
const SAMPLE_EVENTS = 1000;
/** Candidates checked over the whole run, at most (the most frequent in the sample first). */
const CANDIDATES = 64;
/** How deep inside `metadata` a path is looked for. */
const DEPTH = 6;
/** The types `json_type` gives a scalar: a path of one of these, and only one, is discovered. */
const SCALAR = new Set(['VARCHAR', 'BIGINT', 'UBIGINT', 'DOUBLE', 'BOOLEAN']);
const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The source with the typed fields a run's events give it: those its dataset already holds
 * (`typedPaths`, the log's), then those discovered in `events` (a SELECT of the run's events with
 * their `metadata` as JSON): every dotted path of object keys, outside arrays, whose value is
 * present (not missing, not `null`) in at least `DISCOVERY_SHARE` of the events with one scalar
 * type in every event that has it, and at most `DISCOVERY_DISTINCT_SHARE` as many distinct values
 * as events, not declared nor held already; in path order, within
 * `DISCOVERED_PATHS_LIMIT` of the source's paths beyond those it declares. A run of fewer than
 * `DISCOVERY_MIN_EVENTS` events discovers nothing.
 *
 * @example
 * const widened = await discoverTypedPaths(connection, postgresLogs, 'SELECT metadata FROM staged', state.typedPaths);
 */
export async function discoverTypedPaths(connection: DuckDBConnection, source: SourceDescriptor, events: string, typedPaths: readonly string[]): Promise<SourceDescriptor> {
  const held = withTypedPaths(source, typedPaths);
  // Counted from what the source declares, however widened it came (an instance's sources are).
  const room = DISCOVERED_PATHS_LIMIT - (held.typedFields.length - declaredSourceOf(held).typedFields.length);
  if (room <= 0) return held;
  const candidates = await candidatesOf(connection, events, new Set(held.typedFields));
  if (!candidates.length) return held;
  const found = await checkedOverAll(connection, events, candidates);
  return withTypedPaths(held, found.slice(0, room));
}

/** Paths present in at least half of a sample of the events, not known already: the most frequent first, then by path. */
async function candidatesOf(connection: DuckDBConnection, events: string, known: ReadonlySet<string>): Promise<string[]> {
  // Ordered by id: the same run samples the same events, however DuckDB splits the read.
  const sample = (await connection.runAndReadAll(`SELECT CAST(metadata AS VARCHAR) AS m FROM (${events}) WHERE metadata IS NOT NULL ORDER BY id LIMIT ${SAMPLE_EVENTS}`)).getRowObjects();
  // Fewer events with a `metadata` than a path must be present in, in a run of the fewest events
  // that discovers (`checkedOverAll`): nothing to check, and the check's pass is not run.
  if (sample.length < DISCOVERY_SHARE * DISCOVERY_MIN_EVENTS) return [];
  const counts = new Map<string, number>();
  for (const row of sample) {
    let value: unknown;
    try {
      value = JSON.parse(String(row.m));
    } catch {
      continue;
    }
    const paths = new Set<string>();
    leafPaths(value, '', paths, 1);
    for (const p of paths) counts.set(p, (counts.get(p) ?? 0) + 1);
  }
  return [...counts]
    .filter(([p, n]) => n * 2 >= sample.length && !known.has(p) && TYPED_PATH.test(p))
    .sort(([a, n], [b, m]) => m - n || (a < b ? -1 : 1))
    .slice(0, CANDIDATES)
    .map(([p]) => p);
}

/** Adds to `out` the dotted paths of `value`'s scalar leaves (not inside arrays, keys that are names). */
function leafPaths(value: unknown, prefix: string, out: Set<string>, depth: number): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  for (const [key, v] of Object.entries(value)) {
    if (!KEY.test(key)) continue;
    const path = prefix ? `${prefix}.${key}` : key;
    if (v === null) continue;
    if (typeof v !== 'object') out.add(path);
    else if (depth < DEPTH) leafPaths(v, path, out, depth + 1);
  }
}

/** The candidates that hold over every event of the run (share, one scalar type, few values), in path order. */
async function checkedOverAll(connection: DuckDBConnection, events: string, candidates: readonly string[]): Promise<string[]> {
  const paths = `[${candidates.map((p) => jsonPathLiteral(p.split('.'))).join(', ')}]`;
  // One type: its least and its greatest are the same. Not `count(DISTINCT ...)`: DuckDB gives each
  // such aggregate a hash table of its own (2 MiB and more at once), and 64 of them took a run of
  // one event past compaction's 160MB (docs/performance.md, "Compaction's memory for wide events").
  const items = candidates.map(
    (_, i) =>
      `count(v[${i + 1}]) AS p${i}, min(json_type(v[${i + 1}])) = max(json_type(v[${i + 1}])) AS t${i}, min(json_type(v[${i + 1}])) AS k${i}, approx_count_distinct(CAST(v[${i + 1}] AS VARCHAR)) AS d${i}`,
  );
  const [row] = (await connection.runAndReadAll(`SELECT count(*) AS n, ${items.join(', ')} FROM (SELECT json_extract(metadata, ${paths}) AS v FROM (${events}))`)).getRowObjects();
  const n = Number(row?.n ?? 0);
  if (n < DISCOVERY_MIN_EVENTS) return [];
  return candidates
    .filter((_, i) => Number(row![`p${i}`]) >= DISCOVERY_SHARE * n && row![`t${i}`] === true && SCALAR.has(String(row![`k${i}`])) && Number(row![`d${i}`]) <= DISCOVERY_DISTINCT_SHARE * n)
    .sort();
}
