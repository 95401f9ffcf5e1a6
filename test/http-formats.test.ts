import { tableFromIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import type { ColumnSpec } from '../src/index';
import { negotiateFormat } from '../src/http/negotiate-format';
import { parseQueryString, singleValues } from '../src/http/query-string';
import { arrowToIpcStream, rowsToArrow } from '../src/rows/to-arrow';
import { rowsToCsv } from '../src/rows/to-csv';
import { rowsToNdjson } from '../src/rows/to-ndjson';

const COLUMNS: ColumnSpec[] = [
  { name: 'timestamp', type: 'timestamp', description: '' },
  { name: 'count', type: 'integer', description: '' },
  { name: 'avg', type: 'float', description: '' },
  { name: 'message', type: 'text', description: '' },
  { name: 'metadata', type: 'json', description: '' },
];
const ROWS = [
  { timestamp: '2026-11-21T10:15:02.123456Z', count: 3, avg: 1.5, message: 'a, "b"\nc', metadata: { k: [1, 'x'] } },
  { timestamp: '1969-12-31T23:59:59.999999Z', count: 9007199254740991, avg: null, message: null, metadata: null },
];

describe('row converters (shared by HTTP and the CLI)', () => {
  it('CSV: header, CRLF, quoting only where needed, null as an empty field', () => {
    expect(rowsToCsv(COLUMNS, ROWS)).toBe(
      'timestamp,count,avg,message,metadata\r\n' + '2026-11-21T10:15:02.123456Z,3,1.5,"a, ""b""\nc","{""k"":[1,""x""]}"\r\n' + '1969-12-31T23:59:59.999999Z,9007199254740991,,,\r\n',
    );
    expect(rowsToCsv(COLUMNS, [])).toBe('timestamp,count,avg,message,metadata\r\n');
  });

  it('NDJSON: one object per line in column order; nothing for no rows', () => {
    const text = rowsToNdjson(COLUMNS, [{ metadata: null, message: 'm', avg: 2, count: 1, timestamp: 't' }]);
    expect(text).toBe('{"timestamp":"t","count":1,"avg":2,"message":"m","metadata":null}\n');
    expect(rowsToNdjson(COLUMNS, [])).toBe('');
  });

  it('Arrow: exact microseconds (before 1970 too), Int64, nulls kept in every type', async () => {
    const table = tableFromIPC(arrowToIpcStream(await rowsToArrow(COLUMNS, ROWS)));
    expect([...(table.getChild('timestamp')!.data[0]!.values as BigInt64Array)]).toEqual([1795256102123456n, -1n]);
    expect(table.getChild('count')!.get(1)).toBe(9007199254740991n);
    expect(table.getChild('avg')!.get(1)).toBeNull();
    expect(table.getChild('message')!.get(0)).toBe('a, "b"\nc');
    expect(table.getChild('message')!.get(1)).toBeNull();
    expect(JSON.parse(table.getChild('metadata')!.get(0) as string)).toEqual({ k: [1, 'x'] });
    expect(table.getChild('metadata')!.get(1)).toBeNull();
    expect(table.schema.fields.every((f) => f.nullable)).toBe(true);
  });

  it('Arrow of no rows still carries the schema', async () => {
    const table = tableFromIPC(arrowToIpcStream(await rowsToArrow(COLUMNS, [])));
    expect(table.numRows).toBe(0);
    expect(table.schema.fields.map((f) => String(f.type))).toEqual(['Timestamp<MICROSECOND, UTC>', 'Int64', 'Float64', 'Utf8', 'Utf8']);
  });
});

describe('Accept negotiation', () => {
  it.each([
    [null, 'json'],
    ['', 'json'],
    ['*/*', 'json'],
    ['text/csv', 'csv'],
    ['TEXT/CSV; charset=utf-8', 'csv'],
    ['application/x-ndjson', 'ndjson'],
    ['application/vnd.apache.arrow.stream', 'arrow'],
    ['text/csv;q=0.4, application/x-ndjson;q=0.6', 'ndjson'],
    ['text/csv, application/json', 'csv'],
    ['*/*, text/csv', 'csv'],
    ['text/csv;q=0', 'json'],
    ['text/csv;q=2', 'json'],
    ['text/html, image/png', 'json'],
  ] as const)('%s -> %s', (accept, format) => {
    expect(negotiateFormat(accept)).toBe(format);
  });
});

describe('query strings', () => {
  it('decodes form encoding, keeps every value, and ignores empty pairs', () => {
    const q = parseQueryString('?a=1+2&b=%C3%A9&a=3&&c&d=');
    expect([...q]).toEqual([
      ['a', ['1 2', '3']],
      ['b', ['é']],
      ['c', ['']],
      ['d', ['']],
    ]);
  });

  it('refuses repeats of declared parameters only', () => {
    const q = parseQueryString('project=a&x=1&x=2');
    expect(singleValues(q, ['project'])).toEqual({ project: 'a', x: '1' });
    expect(() => singleValues(parseQueryString('project=a&project=b'), ['project'])).toThrow(/more than once/);
  });
});
