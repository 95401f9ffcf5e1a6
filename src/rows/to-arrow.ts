// Types only: the library itself never loads apache-arrow until Arrow output is asked for.
import type { Data, DataType, Table } from 'apache-arrow';
import type { ColumnSpec, ColumnType } from '../definitions/definition';
import { parseIsoMicros } from '../time/iso';
import type { Row } from './shape-rows';
import { stringifyExactJson } from '../util/exact-json';
import { EngineError } from '../errors';

type Arrow = typeof import('apache-arrow');

let loaded: Arrow | null = null;

/**
 * apache-arrow, loaded on first use: it is a large module most users never ask for, so importing
 * log-endpoints does not load it; the first Arrow answer does (library `format: 'arrow'`, HTTP
 * Arrow output, CLI `--format arrow`).
 */
export async function loadArrow(): Promise<Arrow> {
  loaded ??= await import('apache-arrow');
  return loaded;
}

/** The module once loaded; only code holding an Arrow table (so after `loadArrow`) calls this. */
function arrow(): Arrow {
  if (!loaded) throw new EngineError('query_failed', 'apache-arrow is used before loadArrow() resolved.');
  return loaded;
}

/**
 * An Arrow table of shaped rows, typed by the endpoint's columns: timestamps as microsecond
 * timestamps in UTC, integers as Int64 (counts can pass 2^31 over long windows), floats as
 * Float64, text as Utf8 and `json` columns as their JSON text. Every column is nullable.
 */
export async function rowsToArrow(columns: readonly ColumnSpec[], rows: readonly Row[]): Promise<Table> {
  const { Field, makeData, RecordBatch, Schema, Struct, Table } = await loadArrow();
  const fields = columns.map((c) => new Field(c.name, arrowType(c.type), true));
  const children = columns.map((c) => columnData(c, rows));
  const schema = new Schema(fields);
  const struct = makeData({ type: new Struct(fields), length: rows.length, nullCount: 0, children });
  return new Table(schema, new RecordBatch(schema, struct));
}

/** The Arrow IPC stream format (`application/vnd.apache.arrow.stream`) of a table. */
export function arrowToIpcStream(table: Table): Uint8Array {
  return arrow().tableToIPC(table, 'stream');
}

function arrowType(type: ColumnType): DataType {
  const { Bool, Float64, Int64, TimestampMicrosecond, Utf8 } = arrow();
  switch (type) {
    case 'boolean':
      return new Bool();
    case 'timestamp':
      return new TimestampMicrosecond('UTC');
    case 'integer':
      return new Int64();
    case 'float':
      return new Float64();
    case 'text':
    case 'json':
      return new Utf8();
  }
}

function columnData(column: ColumnSpec, rows: readonly Row[]): Data {
  const { Bool, Float64, Int64, TimestampMicrosecond, Utf8, vectorFromArray } = arrow();
  const values = rows.map((row) => row[column.name] ?? null);
  switch (column.type) {
    case 'boolean':
      return vectorFromArray(
        values.map((v) => (v === null ? null : Boolean(v))),
        new Bool(),
      ).data[0]!;
    case 'timestamp':
      // Built from the raw int64 micros: Arrow's own builders take milliseconds as a float and lose the last digits.
      return fixedWidth(new TimestampMicrosecond('UTC'), values, BigInt64Array, (v) => parseIsoMicros(String(v)) ?? 0n);
    case 'integer':
      return fixedWidth(new Int64(), values, BigInt64Array, (v) => BigInt(Math.trunc(Number(v))));
    case 'float':
      return fixedWidth(new Float64(), values, Float64Array, (v) => Number(v));
    case 'text':
      return vectorFromArray(
        values.map((v) => (v === null ? null : String(v))),
        new Utf8(),
      ).data[0]!;
    case 'json':
      return vectorFromArray(
        values.map((v) => (v === null ? null : stringifyExactJson(v))),
        new Utf8(),
      ).data[0]!;
  }
}

function fixedWidth<T extends bigint | number>(
  type: DataType,
  values: readonly Row[string][],
  Array: { new (length: number): { [i: number]: T } & ArrayBufferView },
  convert: (value: NonNullable<Row[string]>) => T,
): Data {
  const data = new Array(values.length);
  const validity = new Uint8Array(Math.ceil(values.length / 8));
  let nullCount = 0;
  values.forEach((value, i) => {
    if (value === null) {
      nullCount++;
      return;
    }
    data[i] = convert(value);
    validity[i >> 3]! |= 1 << (i & 7);
  });
  return arrow().makeData({ type, length: values.length, nullCount, data, nullBitmap: nullCount ? validity : undefined } as never);
}

/** A query answer with its rows as an Arrow table too (`ep.query(name, params, { format: 'arrow' })`). */
export async function withArrowTable<T extends { result: readonly Row[] }>(answer: T, columns: readonly ColumnSpec[]): Promise<T & { table: Table }> {
  return { ...answer, table: await rowsToArrow(columns, answer.result) };
}
