import type { EngineValue } from '../engine';
import type { JsonResult } from './run-sql';

/**
 * Result rows as engine values, by the column types ClickHouse reports: 64-bit integers (sent
 * as strings in JSON, so they stay exact: see `runSql`) become bigint, which is what timestamps in
 * microseconds are; smaller integers and floats numbers; text text; NULL null.
 */
export function decodeRows(result: JsonResult): Record<string, EngineValue>[] {
  const decoders = result.meta.map(({ name, type }) => [name, decoderOf(type)] as const);
  return result.data.map((row) => {
    const out: Record<string, EngineValue> = {};
    for (const [name, decode] of decoders) {
      const value = row[name];
      out[name] = value === null || value === undefined ? null : decode(value);
    }
    return out;
  });
}

function decoderOf(type: string): (value: unknown) => EngineValue {
  const bare = type.replace(/^(?:LowCardinality\()?(?:Nullable\()?([^()]*)\)*$/, '$1');
  if (/^U?Int(64|128|256)$/.test(bare)) return (v) => BigInt(v as string | number);
  if (/^U?Int(8|16|32)$/.test(bare) || /^Float(32|64)$/.test(bare)) return (v) => Number(v);
  if (bare === 'String' || bare === 'FixedString') return (v) => String(v);
  return (v) => (typeof v === 'object' ? JSON.stringify(v) : (v as EngineValue));
}
