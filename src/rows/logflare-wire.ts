import type { ColumnSpec } from '../definitions/definition';
import type { EngineValue } from '../engine/engine';
import { formatIsoMicros, parseIsoMicros } from '../time/iso';
import { shapeValue, type Row } from './shape-rows';

/** How answers to callers' SQL are written (`wireFormat` of createEndpoints). */
export type WireFormat = 'iso' | 'logflare';

/**
 * Shaped rows in Logflare's wire format (docs/supabase.md, "Wire format"), what Supabase Studio
 * reads: every timestamp an integer of unix microseconds (Studio divides it to page), every JSON
 * object wrapped in a one-element array, recursively (`metadata[0].request[0].path`), as
 * BigQuery returns a REPEATED RECORD; an array stays an array (its objects are the records).
 * Columns of other types pass through.
 *
 * @example
 * toLogflareWire([{ name: 'timestamp', type: 'timestamp' }, { name: 'metadata', type: 'json' }],
 *   [{ timestamp: '2026-11-21T10:00:00.000000Z', metadata: { request: { path: '/' } } }]);
 * // [{ timestamp: 1795255200000000, metadata: [{ request: [{ path: '/' }] }] }]
 */
export function toLogflareWire(columns: readonly Pick<ColumnSpec, 'name' | 'type'>[], rows: readonly Row[]): Row[] {
  const timestamps = columns.filter((c) => c.type === 'timestamp').map((c) => c.name);
  const json = columns.filter((c) => c.type === 'json').map((c) => c.name);
  if (!timestamps.length && !json.length) return rows as Row[];
  return rows.map((row) => {
    const out: Row = { ...row };
    for (const name of timestamps) {
      const value = row[name];
      // Microseconds of years 1 to 9999 are below 2^53: exact as a JSON number.
      if (typeof value === 'string') out[name] = Number(parseIsoMicros(value));
    }
    for (const name of json) out[name] = wrapped(row[name]) as Row[string];
    return out;
  });
}

/**
 * Engine rows shaped straight into Logflare's wire format: what `toLogflareWire(columns,
 * shapeRows(columns, rows))` gives, without writing each timestamp as ISO text to read it back
 * (a list of 100 rows did so on every request: docs/performance.md, "No fixed cost per request").
 *
 * @example
 * shapeLogflareRows([{ name: 'timestamp', type: 'timestamp' }], [{ timestamp: 1795255200000000n }]);
 * // [{ timestamp: 1795255200000000 }]
 */
export function shapeLogflareRows(columns: readonly Pick<ColumnSpec, 'name' | 'type'>[], rows: readonly Record<string, EngineValue>[]): Row[] {
  return rows.map((row) => {
    const out: Row = {};
    for (const column of columns) {
      const value = row[column.name] ?? null;
      if (column.type === 'timestamp') out[column.name] = value === null ? null : wireMicros(BigInt(value as bigint | number));
      else if (column.type === 'json') out[column.name] = wrapped(shapeValue(column, value)) as Row[string];
      else out[column.name] = shapeValue(column, value);
    }
    return out;
  });
}

/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z in microseconds: the instants ISO text writes and reads back as they are. */
const FIRST_ISO_MICROS = -62_135_596_800_000_000n;
const LAST_ISO_MICROS = 253_402_300_799_999_999n;

/** A timestamp as the wire's number: its microseconds, or what its ISO text reads back as outside years 1 - 9999. */
function wireMicros(micros: bigint): number {
  if (micros >= FIRST_ISO_MICROS && micros <= LAST_ISO_MICROS) return Number(micros);
  return Number(parseIsoMicros(formatIsoMicros(micros)));
}

/** A JSON value as a field of a record: an object becomes a one-element array of its record. */
function wrapped(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(element);
  if (value !== null && typeof value === 'object') return [record(value as Record<string, unknown>)];
  return value;
}

/** An element of an array: an object is one record (not wrapped again), an array stays one. */
function element(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(element);
  if (value !== null && typeof value === 'object') return record(value as Record<string, unknown>);
  return value;
}

function record(object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) out[key] = wrapped(value);
  return out;
}
