/**
 * What the ClickHouse engine writes into SQL text, and what it sends beside it, checked without a
 * server: integers and names are validated so nothing else comes out, text values never reach
 * the SQL, and external data and RowBinary encode what they are given.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bindParams, placeholders } from '../src/engine/clickhouse/bind-params';
import { clickhouseErrorCode, patternProblem, toEngineError } from '../src/engine/clickhouse/classify-error';
import { decodeRows } from '../src/engine/clickhouse/decode-rows';
import { stripComments } from '../src/engine/clickhouse/query-files';
import { preparedQuerySql } from '../src/query/clickhouse-statement';
import { querySql } from '../src/sql/query-files';
import { RowBinaryWriter } from '../src/engine/clickhouse/row-binary';
import { multipart, runSql } from '../src/engine/clickhouse/run-sql';
import { clickhouseEngine, clickhouseLoader } from '../src/clickhouse';
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { schemaStatements } from '../src/engine/clickhouse/schema';
import { clickhouseSourceTables } from '../src/query/clickhouse-source-tables';
import { sqlClusterName, sqlIdentifier, sqlInteger, tsvField } from '../src/engine/clickhouse/sql-text';
import { EngineError, InvalidOptionError } from '../src/errors';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** ClickHouse's TabSeparated unescaping, written from its documentation (independent of tsvField). */
function readTsvField(field: string): string | null {
  if (field === '\\N') return null;
  const map: Record<string, string> = { b: '\b', f: '\f', r: '\r', n: '\n', t: '\t', 0: '\0', "'": "'", '\\': '\\' };
  return field.replace(/\\(.)/gs, (_, c: string) => map[c] ?? c);
}

describe('SQL text', () => {
  it('writes an Int64 as toInt64(<digits>) that reads back as the value, for every Int64', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), (n) => {
        const text = sqlInteger(n, 'Int64');
        const m = /^toInt64\((-?\d+)\)$/.exec(text);
        expect(m).not.toBeNull();
        expect(BigInt(m![1]!)).toBe(n);
      }),
    );
  });

  it('writes unsigned values as bare digits (LIMIT in ClickHouse 18 takes only literals)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (n) => {
        expect(sqlInteger(n, 'UInt32')).toBe(String(n));
      }),
    );
  });

  it('refuses anything that is not a whole number within the type', () => {
    const bad: unknown[] = [1.5, NaN, Infinity, -1, 2 ** 32, '1', '1; DROP TABLE x', null, {}, 2 ** 53];
    for (const value of bad) expect(() => sqlInteger(value as number, 'UInt32'), String(value)).toThrow();
    expect(() => sqlInteger(INT64_MAX + 1n, 'Int64', 'after')).toThrow(
      expect.objectContaining({ code: 'query_failed', message: expect.stringMatching(/^Query parameter after \(Int64\): .* outside the range of Int64/) }),
    );
    expect(() => sqlInteger(INT64_MIN - 1n, 'Nullable(Int64)')).toThrow(EngineError);
    expect(() => sqlInteger(1.5, 'UInt32')).toThrow(EngineError);
    expect(() => sqlInteger(1, 'String')).toThrow(expect.objectContaining({ code: 'invariant' }));
    fc.assert(
      fc.property(fc.double(), (x) => {
        if (Number.isSafeInteger(x) && x >= 0 && x < 2 ** 32) return;
        expect(() => sqlInteger(x, 'UInt32')).toThrow();
      }),
    );
  });

  it('quotes only plain names, and refuses every other name', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 140, unit: 'binary' }), (name) => {
        let quoted: string;
        try {
          quoted = sqlIdentifier(name, 'database');
        } catch {
          expect(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name)).toBe(false);
          return;
        }
        expect(quoted).toBe(`\`${name}\``);
        expect(/^`[A-Za-z_][A-Za-z0-9_]*`$/.test(quoted)).toBe(true);
      }),
    );
    for (const bad of ['', '1abc', 'a-b', 'a`b', 'a b', "a'b", 'x;DROP', 'é'])
      expect(() => sqlIdentifier(bad, 'database')).toThrow(expect.objectContaining({ code: 'invalid_option', option: 'database' }));
  });

  it('quotes cluster names as literals only when they hold no quote or backslash', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 140, unit: 'binary' }), (name) => {
        try {
          const literal = sqlClusterName(name);
          expect(literal).toBe(`'${name}'`);
          expect(/['\\\s]/.test(name)).toBe(false);
        } catch {
          expect(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(name)).toBe(false);
        }
      }),
    );
    expect(sqlClusterName('logs-eu.1')).toBe("'logs-eu.1'");
  });

  it('escapes TSV fields so every string reads back exactly and stays on one line of one field', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        const field = tsvField(value);
        expect(field).not.toMatch(/[\t\n\r\0]/);
        expect(readTsvField(field)).toBe(value);
      }),
      { numRuns: 2000 },
    );
    expect(tsvField(null)).toBe('\\N');
    // The text \N is not NULL.
    expect(readTsvField(tsvField('\\N'))).toBe('\\N');
  });
});

describe('binding parameters', () => {
  const SQL =
    'SELECT x FROM t WHERE a = {project:String} AND ({fid:Nullable(String)} IS NULL OR b = {fid:Nullable(String)}) AND ts > {after:Int64} AND ({until:Nullable(Int64)} IS NULL) LIMIT {max_rows:UInt32}';

  it('finds each placeholder once, with its type', () => {
    expect(placeholders(SQL)).toEqual([
      { name: 'project', type: 'String' },
      { name: 'fid', type: 'Nullable(String)' },
      { name: 'after', type: 'Int64' },
      { name: 'until', type: 'Nullable(Int64)' },
      { name: 'max_rows', type: 'UInt32' },
    ]);
    expect(() => placeholders('{a:String} {a:Int64}')).toThrow(expect.objectContaining({ code: 'query_failed', message: 'Query parameter a is used as String and as Int64.' }));
  });

  it('never lets a text value into the SQL: the text sent is the same whatever the values', () => {
    const text = fc.option(fc.string({ unit: 'binary' }), { nil: null });
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), text, fc.string({ unit: 'binary' }), text, (p1, f1, p2, f2) => {
        for (const queryParameters of [false, true]) {
          const a = bindParams(SQL, { project: p1, fid: f1, after: { timestamp: 5n }, until: null, max_rows: 10 }, queryParameters);
          const b = bindParams(SQL, { project: p2, fid: f2, after: { timestamp: 5n }, until: null, max_rows: 10 }, queryParameters);
          expect(a.sql).toBe(b.sql);
          if (queryParameters) expect(a.queryParams).toEqual({ project: p1, fid: f1 });
          else expect(a.externalData!.tsv.split('\t').map((f) => readTsvField(f.replace(/\n$/, '')))).toEqual([p1, f1]);
        }
      }),
    );
  });

  it('writes integers and timestamps as checked literals, NULL where allowed', () => {
    const legacy = bindParams(SQL, { project: 'abc', fid: null, after: { timestamp: 1795256102123456n }, until: null, max_rows: 1000 }, false);
    expect(legacy.sql).toBe(
      'SELECT x FROM t WHERE a = (SELECT `project` FROM le_params) AND ((SELECT `fid` FROM le_params) IS NULL OR b = (SELECT `fid` FROM le_params)) ' +
        'AND ts > toInt64(1795256102123456) AND (NULL IS NULL) LIMIT 1000',
    );
    expect(legacy.externalData).toEqual({ name: 'le_params', structure: 'project String, fid Nullable(String)', tsv: 'abc\t\\N\n' });
    const modern = bindParams(SQL, { project: 'abc', fid: 'f', after: { timestamp: -1n }, until: { timestamp: 7n }, max_rows: 5 }, true);
    expect(modern.sql).toContain('a = {project:String} AND ({fid:Nullable(String)} IS NULL');
    expect(modern.sql).toContain('ts > toInt64(-1) AND (toInt64(7) IS NULL) LIMIT 5');
    expect(modern.externalData).toBeUndefined();
  });

  it('refuses missing values, NULL where not allowed and values of the wrong kind', () => {
    const ok = { project: 'a', fid: null, after: { timestamp: 1n }, until: null, max_rows: 1 };
    expect(() => bindParams(SQL, { ...ok, project: undefined as unknown as string }, false)).toThrow(/No value/);
    const { project: _p, ...missing } = ok;
    expect(() => bindParams(SQL, missing, false)).toThrow(/No value/);
    expect(() => bindParams(SQL, { ...ok, project: null }, false)).toThrow(/NULL/);
    expect(() => bindParams(SQL, { ...ok, project: 5 }, false)).toThrow(/text/);
    expect(() => bindParams(SQL, { ...ok, after: '1; DROP TABLE t' }, false)).toThrow(/number/);
    expect(() => bindParams(SQL, { ...ok, max_rows: -1 }, false)).toThrow(/max_rows \(UInt32\): -1 is outside the range of UInt32/);
    // Each a statement that cannot run with its values: EngineError, query_failed.
    expect(() => bindParams(SQL, missing, false)).toThrow(EngineError);
    expect(() => bindParams('{x:Float64}', { x: 1 }, false)).toThrow(expect.objectContaining({ code: 'query_failed', status: 500 }));
    expect(() => bindParams('{x:Float64}', { x: 1 }, false)).toThrow(/unsupported/);
  });

  it('carries external data as multipart form data: the structure field, then the TSV file', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => {
        const tsv = `${tsvField(value)}\n`;
        const { body, contentType } = multipart({ name: 'le_params', structure: 'p String', tsv });
        const boundary = contentType.replace('multipart/form-data; boundary=', '');
        const text = body.toString('utf8');
        const parts = text.split(`--${boundary}`);
        expect(parts).toHaveLength(5);
        expect(parts[4]).toBe('--\r\n');
        expect(parts[1]).toBe('\r\nContent-Disposition: form-data; name="le_params_structure"\r\n\r\np String\r\n');
        const file = parts[3]!.split('\r\n\r\n').slice(1).join('\r\n\r\n');
        expect(file).toBe(`${tsv}\r\n`);
      }),
    );
  });
});

describe('saved queries', () => {
  it('reads the configured table and declares only the placeholders the definitions bind', () => {
    const bound = {
      'functions.invocation-stats': ['project', 'function_id', 'unit', 'first', 'end', 'max_rows'],
      'logs.all': ['project', 'after', 'until', 'limit'],
      'usage.api-counts': ['project', 'project_literal', 'project_required', 'unit', 'start', 'max_rows'],
      'catalog.projects': ['after', 'max_rows'],
      'catalog.functions': ['after', 'max_rows'],
    } as const;
    for (const [name, params] of Object.entries(bound)) {
      const relation = name === 'functions.invocation-stats' || name === 'catalog.functions' ? 'function_edge_logs' : 'edge_logs';
      const sql = preparedQuerySql(querySql('clickhouse', name), new Map([[relation, '`logs`.`t`']]));
      expect(sql).toContain('FROM `logs`.`t`');
      expect(sql).not.toContain('--');
      expect(
        placeholders(sql)
          .map((p) => p.name)
          .sort(),
      ).toEqual([...params].sort());
    }
  });

  it('removes comments but not -- inside quoted text', () => {
    expect(stripComments("-- header\nSELECT '--x' AS a, 'it''s' -- note\n\nFROM t")).toBe("SELECT '--x' AS a, 'it''s'\nFROM t");
  });

  it('creates day-partitioned MergeTree tables, and Distributed ones over a cluster', () => {
    const plain = schemaStatements({ database: 'logs' });
    expect(plain).toHaveLength(3);
    expect(plain[1]).toMatch(/CREATE TABLE IF NOT EXISTS `logs`.`edge_logs` \(/);
    expect(plain[1]).toMatch(/PARTITION BY toDate\(toDateTime\(intDiv\(timestamp, 1000000\)\)\)\nORDER BY \(project, timestamp\)/);
    const clustered = schemaStatements({ database: 'logs', cluster: 'c1', tables: { edgeLogs: 'gw' } }, { onCluster: true });
    expect(clustered).toHaveLength(5);
    expect(clustered[0]).toBe("CREATE DATABASE IF NOT EXISTS `logs` ON CLUSTER 'c1'");
    expect(clustered[1]).toMatch(/`logs`.`gw_local` ON CLUSTER 'c1'/);
    expect(clustered[2]).toBe("CREATE TABLE IF NOT EXISTS `logs`.`gw` ON CLUSTER 'c1' AS `logs`.`gw_local`\nENGINE = Distributed('c1', 'logs', 'gw_local', rand())");
    expect(() => schemaStatements({ database: 'logs; DROP' })).toThrow(expect.objectContaining({ code: 'invalid_option', option: 'database' }));
    expect(() => schemaStatements({ database: 'logs', tables: { edgeLogs: 'gw-1' } })).toThrow(expect.objectContaining({ code: 'invalid_option', option: 'tables.edgeLogs' }));
    expect(() => schemaStatements({ database: 'logs', cluster: "c'1" })).toThrow(expect.objectContaining({ code: 'invalid_option', option: 'cluster' }));
    expect(() => schemaStatements({ database: 'logs' }, { onCluster: true })).toThrow(
      expect.objectContaining({ code: 'invalid_option', option: 'cluster', message: 'onCluster needs a cluster name.' }),
    );
  });
});

describe('results and errors', () => {
  it('decodes 64-bit integers exactly as bigint, other numbers as numbers, NULL as null', () => {
    const rows = decodeRows({
      meta: [
        { name: 'timestamp', type: 'Int64' },
        { name: 'count', type: 'UInt64' },
        { name: 'avg', type: 'Nullable(Float64)' },
        { name: 'status', type: 'Nullable(Int32)' },
        { name: 'id', type: 'Nullable(String)' },
      ],
      data: [{ timestamp: '1795256102123457', count: '18446744073709551615', avg: 0.30000000000000004, status: null, id: 'x' }],
    });
    expect(rows).toEqual([{ timestamp: 1795256102123457n, count: 18446744073709551615n, avg: 0.30000000000000004, status: null, id: 'x' }]);
  });

  it('reads the error code of ClickHouse 18 messages and of current servers', () => {
    expect(clickhouseErrorCode(new Error('Code: 427, e.displayText() = DB::Exception: ...'))).toBe(427);
    expect(clickhouseErrorCode(Object.assign(new Error('x'), { code: '241' }))).toBe(241);
    expect(clickhouseErrorCode(new Error('socket hang up'))).toBeNull();
  });

  it('maps errors like the DuckDB engine, with no SQL in the message', () => {
    const state = { timedOut: false, closed: false, timeoutMs: 30_000 };
    const sqlError = new Error("Code: 60, e.displayText() = DB::Exception: Table logs.edge_logs doesn't exist. (in query: SELECT secret FROM logs.edge_logs)");
    const failed = toEngineError(sqlError, state);
    expect(failed).toMatchObject({ code: 'query_failed', status: 500, message: 'The query failed in the engine.' });
    expect(failed.cause).toBe(sqlError);
    expect(toEngineError(new Error('Code: 159, e.displayText() = DB::Exception: Timeout exceeded'), state)).toMatchObject({ code: 'timeout', status: 504 });
    expect(toEngineError(new Error('aborted'), { ...state, timedOut: true })).toMatchObject({ code: 'timeout', status: 504 });
    expect(toEngineError(new Error('Code: 241, Memory limit (for query) exceeded'), state)).toMatchObject({ code: 'overloaded', status: 503, retryAfterSeconds: 1 });
    expect(toEngineError(new Error('Code: 202, Too many simultaneous queries'), state)).toMatchObject({ code: 'overloaded', status: 503 });
    expect(toEngineError(new Error('aborted'), { ...state, closed: true })).toMatchObject({ code: 'closed', status: 503 });
  });

  it('asks for 64-bit integers as JSON strings on every query, whatever the settings given (ClickHouse 25.8+ writes bare numbers)', async () => {
    const sent: Array<Record<string, unknown>> = [];
    const client = {
      exec: async (params: { clickhouse_settings: Record<string, unknown> }) => {
        sent.push(params.clickhouse_settings);
        return { stream: Readable.from([Buffer.from('{"meta":[],"data":[]}')]) };
      },
    } as unknown as ClickHouseClient;
    const features = { version: '26.7.1', queryParameters: true };
    await runSql(client, features, { sql: 'SELECT 1', params: {} });
    await runSql(client, features, { sql: 'SELECT 1', params: {}, settings: { output_format_json_quote_64bit_integers: 0, max_threads: 2 } });
    expect(sent).toEqual([
      { wait_end_of_query: 1, output_format_json_quote_64bit_integers: 1 },
      { wait_end_of_query: 1, output_format_json_quote_64bit_integers: 1, max_threads: 2 },
    ]);
  });

  it('refuses an engine or a loader without database at once (InvalidOptionError), a cluster or not', () => {
    for (const options of [{ url: 'http://127.0.0.1:8123', cluster: 'logs' }, { url: 'http://127.0.0.1:8123' }, { url: 'http://127.0.0.1:8123', database: '' }]) {
      for (const [factory, make] of [
        ['clickhouseEngine', clickhouseEngine],
        ['clickhouseLoader', clickhouseLoader],
      ] as const) {
        let error: unknown;
        try {
          make(options as never);
        } catch (e) {
          error = e;
        }
        expect(error, `${factory} ${JSON.stringify(options)}`).toMatchObject({
          code: 'invalid_option',
          option: 'database',
          message: expect.stringMatching(new RegExp(`^${factory} needs database: `)),
        });
      }
    }
  });

  it('refuses a bad name or a missing url at once, with InvalidOptionError naming the option', () => {
    const url = 'http://127.0.0.1:8123';
    const bad: Array<[object, string]> = [
      [{ url, database: 'logs; DROP' }, 'database'],
      [{ url, database: 'logs', tables: { edgeLogs: 'edge logs' } }, 'tables.edgeLogs'],
      [{ url, database: 'logs', tables: { functionEdgeLogs: '1st' } }, 'tables.functionEdgeLogs'],
    ];
    for (const [options, option] of bad) {
      for (const make of [clickhouseEngine, clickhouseLoader]) expect(() => make(options as never)).toThrow(expect.objectContaining({ code: 'invalid_option', status: 500, option }));
    }
    // A source-table template of an endpoint that reads no source_rows.
    expect(() => clickhouseSourceTables('SELECT 1 -- FROM source_rows', [])).toThrow(expect.objectContaining({ code: 'invalid_option', option: 'sourceTables' }));
    // Neither url nor client: nothing could connect.
    for (const [factory, make] of [
      ['clickhouseEngine', clickhouseEngine],
      ['clickhouseLoader', clickhouseLoader],
    ] as const) {
      for (const options of [{ database: 'logs' }, { database: 'logs', url: '' }]) {
        expect(() => make(options)).toThrow(expect.objectContaining({ code: 'invalid_option', option: 'url', message: expect.stringMatching(new RegExp(`^${factory} needs url`)) }));
        expect(() => make(options)).toThrow(InvalidOptionError);
      }
    }
  });

  it('says why a pattern is refused in RE2 terms, without the (?-s) prefix', () => {
    const error = new Error(
      'Code: 427, e.displayText() = DB::Exception: OptimizedRegularExpression: cannot compile re2: (?-s)(, error: missing ): (?-s)(. Look at https://github.com/google/re2/wiki/Syntax for reference., e.what() = DB::Exception',
    );
    expect(patternProblem(error)).toBe('missing ): (');
  });
});

describe('RowBinary', () => {
  /** A decoder written from the format's description, to read back what the writer wrote. */
  function readStrings(buffer: Buffer): Array<string | null> {
    const out: Array<string | null> = [];
    let at = 0;
    while (at < buffer.length) {
      if (buffer[at++] === 1) {
        out.push(null);
        continue;
      }
      let length = 0,
        shift = 0,
        byte: number;
      do {
        byte = buffer[at++]!;
        length += (byte & 0x7f) * 2 ** shift;
        shift += 7;
      } while (byte & 0x80);
      out.push(buffer.subarray(at, at + length).toString('utf8'));
      at += length;
    }
    return out;
  }

  it('writes Nullable(String) values that read back exactly, whatever their length', () => {
    fc.assert(
      fc.property(fc.array(fc.option(fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ minLength: 100, maxLength: 20_000 })), { nil: null }), { maxLength: 20 }), (values) => {
        const writer = new RowBinaryWriter();
        for (const v of values) writer.writeRow(['nullable-string'], [v]);
        expect(writer.rows).toBe(values.length);
        expect(readStrings(writer.take())).toEqual(values);
        expect(writer.rows).toBe(0);
      }),
    );
  });

  it('writes Int64, String, Nullable(Float64) and Nullable(Int32) little-endian with NULL markers', () => {
    const writer = new RowBinaryWriter();
    writer.writeRow(['int64', 'string', 'nullable-float64', 'nullable-int32', 'nullable-float64', 'nullable-int32'], [-2n, 'ab', 0.1, -7, null, null]);
    const expected = Buffer.alloc(8 + 3 + 9 + 5 + 1 + 1);
    expected.writeBigInt64LE(-2n, 0);
    expected.set([2, 0x61, 0x62], 8);
    expected[11] = 0;
    expected.writeDoubleLE(0.1, 12);
    expected[20] = 0;
    expected.writeInt32LE(-7, 21);
    expected[25] = 1;
    expected[26] = 1;
    expect(writer.take()).toEqual(expected);
  });
});
