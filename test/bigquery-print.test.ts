import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { neutralSqlParser } from '../src/query/sql-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidSqlError } from '../src/errors';
import type { BigQuerySchema } from '../src/bigquery/schema';
import { jsonKeysText } from '../src/bigquery/ir';
import { translateBigQuery } from '../src/bigquery/translate-bigquery';
import { checkBigQueryText } from '../src/query/sandboxed-check';

// One printer of the translated query, two dialects (src/bigquery/print-sql.ts; docs/sandboxing.md,
// "BigQuery dialect"): each test is one BigQuery input and the text DuckDB and ClickHouse are
// given for it, side by side; a few semantics are also run on DuckDB. ClickHouse's answers are
// compared with DuckDB's by test/integration/clickhouse-bigquery.test.ts.

const SCHEMA: BigQuerySchema = {
  tables: { t: { columns: { id: 'text', timestamp: 'timestamp', b1: 'boolean', b2: 'boolean', n: 'integer', x: 'float', s: 'text', metadata: 'json' } } },
};

type Printed = { duckdb: string; clickhouse: string };

/** Both engines' text of a query, or of a ClickHouse refusal as `refused: <message>`. */
async function printed(sql: string): Promise<Printed> {
  const duckdb = (await translateBigQuery(sql, SCHEMA, 'duckdb')).sql;
  const clickhouse = await translateBigQuery(sql, SCHEMA, 'clickhouse').then(
    (t) => t.sql,
    (error: unknown) => {
      expect(error).toBeInstanceOf(InvalidSqlError);
      return `refused: ${(error as Error).message}`;
    },
  );
  return { duckdb, clickhouse };
}

/** Both engines' text of one value: `select <expr> as v from t`, without the SELECT around it (or the refusal). */
async function value(expr: string): Promise<Printed> {
  const { duckdb, clickhouse } = await printed(`select ${expr} as v from t`);
  const inner = (text: string, shape: RegExp) => (text.startsWith('refused: ') ? text : (shape.exec(text)?.[1] ?? `not of the expected shape: ${text}`));
  return {
    duckdb: inner(duckdb, /^SELECT (.*) AS "v" FROM "t" AS "t"$/s),
    clickhouse: inner(clickhouse, /^SELECT __c1 AS `v` FROM \(SELECT (.*) AS __c1 FROM `t` AS `t`\)$/s),
  };
}

describe('the BigQuery printers, side by side', () => {
  it('print a SELECT as each engine names its outputs (ClickHouse outside the SELECT, its aliases being seen in WHERE)', async () => {
    expect(await printed('select s from t where n > 1 order by n desc limit 10 offset 5')).toEqual({
      duckdb: 'SELECT "t"."s" AS "s" FROM "t" AS "t" WHERE ("t"."n" > 1) ORDER BY "t"."n" DESC NULLS LAST LIMIT 10 OFFSET 5',
      clickhouse:
        'SELECT __c1 AS `s` FROM (SELECT `t`.`s` AS __c1, `t`.`n` AS __o1 FROM `t` AS `t` WHERE (`t`.`n` > toInt64(1)) ORDER BY __o1 DESC NULLS LAST LIMIT 5, 10) ORDER BY __o1 DESC NULLS LAST',
    });
  });

  it('three-valued logic: AND and OR as DuckDB has them, spelled out for ClickHouse 18.16 (whose OR reads NULL as false)', async () => {
    const kleene = (fn: string) => `[toNullable(toUInt8(0)), NULL, toNullable(toUInt8(1))][${fn}(ifNull(toUInt8(\`t\`.\`b1\`) * 2, 1), ifNull(toUInt8(\`t\`.\`b2\`) * 2, 1)) + 1]`;
    expect(await value('b1 or b2')).toEqual({ duckdb: '("t"."b1" OR "t"."b2")', clickhouse: kleene('greatest') });
    expect(await value('b1 and b2')).toEqual({ duckdb: '("t"."b1" AND "t"."b2")', clickhouse: kleene('least') });
    expect(await value('not b1')).toEqual({ duckdb: '(NOT "t"."b1")', clickhouse: '(NOT `t`.`b1`)' });
    expect(await value('n is null')).toEqual({ duckdb: '("t"."n" IS NULL)', clickhouse: '(`t`.`n` IS NULL)' });
    expect(await value('n <> 2')).toEqual({ duckdb: '("t"."n" <> 2)', clickhouse: '(`t`.`n` <> toInt64(2))' });
  });

  it('ROUND and CAST to INT64 round half away from zero: DuckDB round() does, ClickHouse gets it spelled out from the exact fraction', async () => {
    const half = (x: string) => `arrayMap(__n -> if(abs(__n - trunc(__n)) >= 0.5, trunc(__n) + if(__n < 0, -1, 1), trunc(__n)), [${x}])[1]`;
    expect(await value('round(x)')).toEqual({ duckdb: 'round("t"."x")', clickhouse: half('`t`.`x`') });
    expect(await value('round(x, 2)')).toEqual({ duckdb: 'round("t"."x", 2)', clickhouse: 'round(`t`.`x`, toInt64(2))' });
    expect(await value('cast(x as int64)')).toEqual({ duckdb: 'CAST(round("t"."x") AS BIGINT)', clickhouse: `toInt64(${half('`t`.`x`')})` });
  });

  it('casts: text read as a number fails the query (SAFE_CAST: NULL), BOOL from text is true or false only', async () => {
    const parsed = 'arrayMap(__v -> plus(toFloat64OrNull(__v), throwIf(isNotNull(__v) AND isNull(toFloat64OrNull(__v)))), [`t`.`s`])[1]';
    expect(await value('cast(s as int64)')).toEqual({
      duckdb: 'CAST(round(CAST("t"."s" AS DOUBLE)) AS BIGINT)',
      clickhouse: `toInt64(arrayMap(__n -> if(abs(__n - trunc(__n)) >= 0.5, trunc(__n) + if(__n < 0, -1, 1), trunc(__n)), [${parsed}])[1])`,
    });
    expect(await value('cast(null as bool)')).toEqual({ duckdb: 'CAST(NULL AS BOOLEAN)', clickhouse: 'NULL' });
    expect(await value('safe_cast(s as float64)')).toEqual({ duckdb: 'TRY_CAST("t"."s" AS DOUBLE)', clickhouse: 'toFloat64OrNull(`t`.`s`)' });
    expect(await value('cast(n as string)')).toEqual({ duckdb: 'CAST("t"."n" AS VARCHAR)', clickhouse: 'toString(`t`.`n`)' });
    expect(await value('cast(n as bool)')).toEqual({ duckdb: 'CAST("t"."n" AS BOOLEAN)', clickhouse: '(`t`.`n` != 0)' });
    expect(await value('cast(s as bool)')).toEqual({
      duckdb: 'CAST("t"."s" AS BOOLEAN)',
      clickhouse: "arrayMap(__b -> multiIf(__b = 'true', 1, __b = 'false', 0, throwIf(isNotNull(__b) AND __b NOT IN ('true', 'false')) * NULL), [lower(`t`.`s`)])[1]",
    });
    expect(await value('cast(s as timestamp)')).toEqual({
      duckdb: 'CAST(CAST("t"."s" AS TIMESTAMPTZ) AS TIMESTAMP)',
      clickhouse: 'refused: CAST to TIMESTAMP is not supported by the ClickHouse engine.',
    });
  });

  it('CASE with ELSE NULL where BigQuery has none; its numbers as floats where floats and integers meet (ClickHouse)', async () => {
    expect(await value('case when n > 1 then x when b1 then n end')).toEqual({
      duckdb: 'CASE WHEN ("t"."n" > 1) THEN "t"."x" WHEN "t"."b1" THEN "t"."n" ELSE NULL END',
      clickhouse: 'CASE WHEN (`t`.`n` > toInt64(1)) THEN `t`.`x` WHEN `t`.`b1` THEN toFloat64(`t`.`n`) ELSE NULL END',
    });
    expect(await value('if(b1, s, id)')).toEqual({ duckdb: 'CASE WHEN "t"."b1" THEN "t"."s" ELSE "t"."id" END', clickhouse: 'CASE WHEN `t`.`b1` THEN `t`.`s` ELSE `t`.`id` END' });
  });

  it('IN and BETWEEN: NULL IN (...) is NULL (ClickHouse says 0), BETWEEN as three-valued AND', async () => {
    expect(await value('n in (1, 2.5)')).toEqual({
      duckdb: '("t"."n" IN (1, CAST(2.5 AS DOUBLE)))',
      clickhouse: "arrayMap(__x -> if(isNull(__x), NULL, toFloat64(__x) IN (toFloat64(toInt64(1)), toFloat64('2.5'))), [`t`.`n`])[1]",
    });
    expect(await value('x not between 1 and n')).toEqual({
      duckdb: '("t"."x" NOT BETWEEN 1 AND "t"."n")',
      clickhouse:
        '(NOT arrayMap(__x -> [toNullable(toUInt8(0)), NULL, toNullable(toUInt8(1))][least(ifNull(toUInt8((__x >= toInt64(1))) * 2, 1), ifNull(toUInt8((__x <= `t`.`n`)) * 2, 1)) + 1], [`t`.`x`])[1])',
    });
  });

  it('LIKE escapes with a backslash, as BigQuery (DuckDB only when told)', async () => {
    expect(await value("s like 'a\\\\_%'")).toEqual({ duckdb: 'like_escape("t"."s", \'a\\_%\', \'\\\')', clickhouse: "like(`t`.`s`, 'a\\\\_%')" });
    expect(await value("s not like 'a%'")).toEqual({ duckdb: '("t"."s" NOT LIKE \'a%\')', clickhouse: "notLike(`t`.`s`, 'a%')" });
  });

  it('REGEXP_CONTAINS and REGEXP_EXTRACT: `.` matches no newline (ClickHouse told so), NULL where nothing matches', async () => {
    expect(await value("regexp_contains(s, 'a.b')")).toEqual({ duckdb: 'regexp_matches("t"."s", \'a.b\')', clickhouse: "match(`t`.`s`, '(?-s)a.b')" });
    expect(await value("regexp_extract(s, 'id=([0-9]+)')")).toEqual({
      duckdb: 'CASE WHEN regexp_matches("t"."s", \'id=([0-9]+)\') THEN regexp_extract("t"."s", \'id=([0-9]+)\', 1) ELSE NULL END',
      clickhouse: "CASE WHEN match(`t`.`s`, '(?-s)id=([0-9]+)') THEN extract(`t`.`s`, '(?-s)id=([0-9]+)') ELSE NULL END",
    });
  });

  it('REGEXP_CONTAINS: flag groups keep their RE2 meaning on ClickHouse 18.16 as scoped groups to the end of their group (its match() reads (?i)x as needing x)', async () => {
    expect(await value("regexp_contains(s, '(?i)COnnecTion')")).toEqual({ duckdb: 'regexp_matches("t"."s", \'(?i)COnnecTion\')', clickhouse: "match(`t`.`s`, '(?-s)(?i:COnnecTion)')" });
    expect(await value("regexp_contains(s, 'a(?i)b(c(?s)d)e|f')")).toEqual({ duckdb: 'regexp_matches("t"."s", \'a(?i)b(c(?s)d)e|f\')', clickhouse: "match(`t`.`s`, '(?-s)a(?i:b(c(?s:d))e|f)')" });
    // Not a flag group: escaped, in a class, a named group.
    expect((await value("regexp_contains(s, '\\\\(?i)[(?i)](?P<n>x)')")).clickhouse).toBe("match(`t`.`s`, '(?-s)\\\\(?i)[(?i)](?P<n>x)')");
  });

  it('functions written once where both engines spell them alike, renamed where only the name differs', async () => {
    expect(await value('concat(s, id)')).toEqual({ duckdb: '("t"."s" || "t"."id")', clickhouse: '(`t`.`s` || `t`.`id`)' });
    expect(await value('safe_divide(x, n)')).toEqual({
      duckdb: 'CASE WHEN "t"."n" = 0 THEN NULL ELSE "t"."x" / "t"."n" END',
      clickhouse: 'CASE WHEN `t`.`n` = 0 THEN NULL ELSE `t`.`x` / `t`.`n` END',
    });
    expect(await value('mod(n, 3)')).toEqual({ duckdb: '("t"."n" % 3)', clickhouse: '(`t`.`n` % toInt64(3))' });
    expect(await value('coalesce(n, x)')).toEqual({ duckdb: 'coalesce("t"."n", "t"."x")', clickhouse: 'coalesce(toFloat64(`t`.`n`), `t`.`x`)' });
    expect(await value('lower(s)')).toEqual({ duckdb: 'lower("t"."s")', clickhouse: 'lowerUTF8(`t`.`s`)' });
    expect(await value('length(s)')).toEqual({ duckdb: 'length("t"."s")', clickhouse: 'toInt64(lengthUTF8(`t`.`s`))' });
  });

  it("FORMAT_TIMESTAMP's %M is the minute on every ClickHouse: cut from %T (current ClickHouse writes the month's name for %M, 18.16 has no %i)", async () => {
    const at = "toDateTime(intDiv(`t`.`timestamp` - (((`t`.`timestamp` % 1000000) + 1000000) % 1000000), 1000000), 'UTC')";
    const minute = "substring(formatDateTime(__f, '%T', 'UTC'), 4, 2)";
    expect((await value("format_timestamp('%Y-%m-%d %H:%M %%M', timestamp)")).clickhouse).toBe(
      `arrayMap(__f -> concat(formatDateTime(__f, '%Y-%m-%d %H:', 'UTC'), ${minute}, formatDateTime(__f, ' %%M', 'UTC')), [${at}])[1]`,
    );
    expect((await value("format_timestamp('%M', timestamp)")).clickhouse).toBe(`arrayMap(__f -> ${minute}, [${at}])[1]`);
    expect((await value("format_timestamp('%F %T', timestamp)")).clickhouse).toBe(`arrayMap(__f -> formatDateTime(__f, '%F %T', 'UTC'), [${at}])[1]`);
  });

  it('timestamps: DuckDB TIMESTAMP, ClickHouse microseconds in an Int64; whole units towards zero, UNIX_SECONDS down', async () => {
    expect(await value("timestamp_add(timestamp '2026-11-20T10:00:00Z', interval 2 minute)")).toEqual({
      duckdb: 'make_timestamp(epoch_us(make_timestamp(1795168800000000)) + 120000000)',
      clickhouse: '((toInt64(1795168800000000)) + toInt64(120000000))',
    });
    expect(await value("timestamp_diff(timestamp, timestamp '2026-11-20T10:00:00Z', second)")).toEqual({
      duckdb: '(((epoch_us("t"."timestamp") - epoch_us(make_timestamp(1795168800000000))) - (epoch_us("t"."timestamp") - epoch_us(make_timestamp(1795168800000000))) % 1000000) // 1000000)',
      clickhouse: 'intDiv(`t`.`timestamp` - (toInt64(1795168800000000)), 1000000)',
    });
    expect(await value('unix_seconds(timestamp)')).toEqual({
      duckdb: '((epoch_us("t"."timestamp") - ((epoch_us("t"."timestamp") % 1000000) + 1000000) % 1000000) // 1000000)',
      clickhouse: 'intDiv(`t`.`timestamp` - (((`t`.`timestamp` % 1000000) + 1000000) % 1000000), 1000000)',
    });
    expect(await value('timestamp_trunc(timestamp, hour)')).toEqual({
      duckdb: 'CASE WHEN epoch_us("t"."timestamp") >= 0 THEN make_timestamp((epoch_us("t"."timestamp") // 3600000000) * 3600000000) ELSE date_trunc(\'hour\', "t"."timestamp") END',
      clickhouse: '(`t`.`timestamp` - (((`t`.`timestamp` % toInt64(3600000000)) + toInt64(3600000000)) % toInt64(3600000000)))',
    });
    expect(await value('extract(hour from timestamp)')).toEqual({
      duckdb: 'date_part(\'hour\', "t"."timestamp")',
      clickhouse: "toInt64(toHour(toDateTime(intDiv(`t`.`timestamp` - (((`t`.`timestamp` % 1000000) + 1000000) % 1000000), 1000000), 'UTC')))",
    });
  });

  it('DATETIME(timestamp) is the timestamp read in UTC, as CAST(x AS DATETIME); another argument or time zone is refused naming DATETIME', async () => {
    expect(await value('datetime(timestamp)')).toEqual({ duckdb: '"t"."timestamp"', clickhouse: '`t`.`timestamp`' });
    expect(await value("datetime(timestamp, 'UTC')")).toEqual(await value('cast(timestamp as datetime)'));
    await expect(value('datetime(s)')).rejects.toThrow('DATETIME takes a TIMESTAMP here');
    await expect(value("datetime(timestamp, 'Europe/Paris')")).rejects.toThrow('DATETIME is supported in UTC only');
  });

  it('APPROX_QUANTILES(x, n)[OFFSET(k)]: the sorted values at position max(1, ceil(k * count / n)) on both engines, and the whole array of them; other subscripts refused naming them', async () => {
    const p95 = {
      duckdb: 'quantile_disc("t"."x", 0.95)',
      clickhouse: 'if(count(`t`.`x`) = 0, NULL, arrayElement(arraySort(groupArray(`t`.`x`)), toUInt64(greatest(1, intDiv(count(`t`.`x`) * 95 + 99, 100)))))',
    };
    expect(await value('approx_quantiles(x, 100)[offset(95)]')).toEqual(p95);
    expect(await value('approx_quantiles(x, 100)[ordinal(96)]')).toEqual(p95);
    expect(await value('approx_quantiles(x, 100)[safe_offset(95)]')).toEqual(p95);
    expect(await value('approx_quantiles(n, 4)[offset(1)]')).toEqual({
      duckdb: 'quantile_disc("t"."n", 0.25)',
      clickhouse: 'if(count(`t`.`n`) = 0, NULL, arrayElement(arraySort(groupArray(`t`.`n`)), toUInt64(greatest(1, intDiv(count(`t`.`n`) * 1 + 3, 4)))))',
    });
    expect(await value('approx_quantiles(x, 10)[safe_offset(11)]')).toEqual({ duckdb: 'NULL', clickhouse: 'NULL' });
    await expect(value('approx_quantiles(x, 10)[offset(11)]')).rejects.toThrow('APPROX_QUANTILES(x, 10) has 11 values: OFFSET 11 is out of bounds.');
    await expect(value('approx_quantiles(x, 3)[offset(1)]')).rejects.toThrow('the quantile 1/3 is no exact decimal');
    expect(await value('approx_quantiles(x, 4)')).toEqual({
      duckdb: 'to_json(quantile_disc(CAST("t"."x" AS DOUBLE), [0.00, 0.25, 0.50, 0.75, 1.00]))',
      clickhouse:
        "arrayMap(__s -> if(empty(__s), NULL, concat('[', arrayStringConcat(arrayMap(__k -> toString(assumeNotNull(arrayElement(__s, toUInt64(greatest(1, intDiv(length(__s) * __k + 3, 4)))))), range(5)), ','), ']')), [arraySort(groupArray(`t`.`x`))])[1]",
    });
    await expect(value('approx_quantiles(x, 3)')).rejects.toThrow('APPROX_QUANTILES(x, 3) is not supported here: its quantiles k/3 are no exact decimals');
    await expect(value('approx_quantiles(x, 400)')).rejects.toThrow('APPROX_QUANTILES(x, 400) as a whole array is not supported here: n at most 250');
    await expect(value('approx_quantiles(timestamp, 2)')).rejects.toThrow('APPROX_QUANTILES of this type is not supported here: numbers (a timestamp: read one quantile, [OFFSET(k)])');
    await expect(value('metadata.parsed[safe_offset(0)].a[offset(0)]')).rejects.toThrow(
      'An array subscript ([OFFSET(n)], [SAFE_OFFSET(n)], [ORDINAL(n)]) is supported here on APPROX_QUANTILES(x, n) and once on a JSON field',
    );
    await expect(value('approx_quantiles(x, 100)[offset(n)]')).rejects.toThrow('An array subscript here takes a whole number literal');
  });

  it('MIN/MAX of a JSON field: each value CAST as a FLOAT64, a JSON string replaced by the reason, which fails the cast (the query fails naming the aggregate)', async () => {
    const why = "'MAX of a JSON field compares numbers: this value is no number (for text, MAX(CAST(x AS STRING)))'";
    const raw = "arrayElement(`t`.`_metadata_values`, indexOf(`t`.`_metadata_paths`, '.a'))";
    const text = `arrayMap(__j -> if(startsWith(__j, '"'), visitParamExtractString(concat('{"v":', __j, '}'), 'v'), nullIf(nullIf(__j, ''), 'null')), [${raw}])[1]`;
    const number = `arrayMap(__v -> plus(toFloat64OrNull(__v), throwIf(isNotNull(__v) AND isNull(toFloat64OrNull(__v)))), [CASE WHEN startsWith(${raw}, '"') THEN ${why} ELSE ${text} END])[1]`;
    expect(await value('max(metadata.a)')).toEqual({
      duckdb: `max(CAST(CASE WHEN (json_type(json_extract("t"."metadata", '$."a"')) = 'VARCHAR') THEN ${why} ELSE json_extract_string("t"."metadata", '$."a"') END AS DOUBLE))`,
      clickhouse: `if(count(${number}) = 0, NULL, max(${number}))`,
    });
    expect((await value('min(metadata.a)')).duckdb).toContain("'MIN of a JSON field compares numbers");
    await expect(value('any_value(metadata.a)')).rejects.toThrow('ANY_VALUE of a JSON field: cast it first');
  });

  it('a subscript of a JSON field: an array gives its element, anything else is its one element (index 0); OFFSET out of bounds fails the query', async () => {
    const record = 'json_extract("t"."metadata", \'$."parsed"\')';
    const raw = (path: string) => `arrayElement(\`t\`.\`_metadata_values\`, indexOf(\`t\`.\`_metadata_paths\`, ${path}))`;
    expect(await value('metadata.parsed[safe_offset(0)].e')).toEqual({
      duckdb: `nullif(CASE WHEN json_type(${record}) = 'ARRAY' THEN json_extract(json_extract(${record}, '$[0]'), '$."e"') ELSE json_extract(${record}, '$."e"') END, CAST('null' AS JSON))`,
      clickhouse: `nullIf(nullIf(if(startsWith(${raw("'.parsed'")}, '['), ${raw("concat('.parsed', '[0].e')")}, ${raw("concat('.parsed', '.e')")}), ''), 'null')`,
    });
    expect(await value('metadata.parsed[safe_ordinal(1)].e')).toEqual(await value('metadata.parsed[safe_offset(0)].e'));
    expect(await value('metadata.parsed[offset(1)]')).toEqual({
      duckdb: `nullif(CASE WHEN (json_type(${record}) = 'ARRAY' AND json_array_length(${record}) <= 1) OR json_type(${record}) NOT IN ('ARRAY', 'NULL') THEN CAST(('Array index 1 is out of bounds of ' || json_type(${record})) AS JSON) ELSE CASE WHEN json_type(${record}) = 'ARRAY' THEN json_extract(${record}, '$[1]') ELSE NULL END END, CAST('null' AS JSON))`,
      clickhouse: `nullIf(nullIf(if(throwIf((startsWith(${raw("'.parsed'")}, '[') AND indexOf(\`t\`.\`_metadata_paths\`, concat('.parsed', '[1]')) = 0) OR (${raw("'.parsed'")} NOT IN ('', 'null') AND NOT startsWith(${raw("'.parsed'")}, '['))) = 0, if(startsWith(${raw("'.parsed'")}, '['), ${raw("concat('.parsed', '[1]')")}, ''), ''), ''), 'null')`,
    });
    expect(await value('metadata.parsed[safe_ordinal(0)]')).toEqual({ duckdb: 'NULL', clickhouse: 'NULL' });
    await expect(value('metadata.parsed[ordinal(0)]')).rejects.toThrow('ORDINAL(0) is out of bounds');
  });

  it("CAST(timestamp AS STRING) is BigQuery's text: seconds by FORMAT_TIMESTAMP, the fraction from UNIX_MICROS without trailing zeros, then +00", async () => {
    const fraction = {
      duckdb: '((("t"."timestamp_micros" % 1000000) + 1000000) % 1000000)',
      clickhouse: '(((`t`.`timestamp` % toInt64(1000000)) + toInt64(1000000)) % toInt64(1000000))',
    };
    const duckFraction = fraction.duckdb.replace('"t"."timestamp_micros"', 'epoch_us("t"."timestamp")');
    expect(await value('cast(timestamp as string)')).toEqual({
      duckdb: `(strftime("t"."timestamp", '%Y-%m-%d %H:%M:%S') || CASE WHEN (${duckFraction} = 0) THEN '' ELSE ('.' || regexp_replace(substr(CAST((${duckFraction} + 1000000) AS VARCHAR), 2, 6), '0+$', '', 'g')) END || '+00')`,
      clickhouse: `(arrayMap(__f -> formatDateTime(__f, '%F %T', 'UTC'), [toDateTime(intDiv(\`t\`.\`timestamp\` - (((\`t\`.\`timestamp\` % 1000000) + 1000000) % 1000000), 1000000), 'UTC')])[1] || CASE WHEN (${fraction.clickhouse} = toInt64(0)) THEN '' ELSE ('.' || replaceRegexpAll(substringUTF8(toString((${fraction.clickhouse} + toInt64(1000000))), toUInt64(toInt64(2)), toUInt64(greatest(toInt64(6), 0))), '(?-s)0+$', '')) END || '+00')`,
    });
    expect(await value('safe_cast(timestamp as string)')).toEqual(await value('cast(timestamp as string)'));
    await expect(value('cast(timestamp as int64)')).rejects.toThrow('CAST of a TIMESTAMP to this type is not supported here: cast it to STRING, or use UNIX_MICROS.');
  });

  it("CURRENT_TIMESTAMP() and CURRENT_DATETIME() read the endpoint's bound $now, never the engine's clock; CURRENT_DATE is refused (no DATE values)", async () => {
    expect(await value('timestamp_sub(current_timestamp(), interval 1 day)')).toEqual({
      duckdb: 'make_timestamp(epoch_us($now) + -86400000000)',
      clickhouse: '({now:Int64} + toInt64(-86400000000))',
    });
    expect(await value('current_timestamp')).toEqual({ duckdb: '$now', clickhouse: '{now:Int64}' });
    expect(await value("current_datetime('UTC')")).toEqual({ duckdb: '$now', clickhouse: '{now:Int64}' });
    await expect(value('current_date()')).rejects.toThrow("BigQuery's CURRENT_DATE is not supported here (DATE values are not supported: use TIMESTAMP_TRUNC(CURRENT_TIMESTAMP(), DAY))");
    await expect(value('current_timestamp(1)')).rejects.toThrow('CURRENT_TIMESTAMP takes 0 arguments');
  });

  it("IN a subquery selecting a JSON field reads it as the other side (text here); UNION ALL gives a bare NULL the other side's kind", async () => {
    expect(await printed('select id from t where s in (select metadata.fn from t as u)')).toEqual({
      duckdb: 'SELECT "t"."id" AS "id" FROM "t" AS "t" WHERE ("t"."s" IN (SELECT json_extract_string("u"."metadata", \'$."fn"\') AS "fn" FROM "t" AS "u"))',
      clickhouse:
        "SELECT __c1 AS `id` FROM (SELECT `t`.`id` AS __c1 FROM `t` AS `t` WHERE (`t`.`s` IN (SELECT __c1 AS `fn` FROM (SELECT arrayMap(__j -> if(startsWith(__j, '\"'), visitParamExtractString(concat('{\"v\":', __j, '}'), 'v'), nullIf(nullIf(__j, ''), 'null')), [arrayElement(`u`.`_metadata_values`, indexOf(`u`.`_metadata_paths`, '.fn'))])[1] AS __c1 FROM `t` AS `u`))))",
    });
    expect((await printed('select metadata.a as v from t union all select null from t')).duckdb).toBe(
      '(SELECT nullif(json_extract("t"."metadata", \'$."a"\'), CAST(\'null\' AS JSON)) AS "v" FROM "t" AS "t") UNION ALL (SELECT CAST(NULL AS JSON) AS "f0_" FROM "t" AS "t")',
    );
    expect((await printed('select null as v from t union all select n from t')).duckdb).toBe('(SELECT CAST(NULL AS BIGINT) AS "v" FROM "t" AS "t") UNION ALL (SELECT "t"."n" AS "n" FROM "t" AS "t")');
    await expect(printed('select n from t where n in (select metadata.fn from t as u)')).resolves.toBeTruthy();
    await expect(printed('select timestamp from t where timestamp in (select metadata.fn from t as u)')).rejects.toThrow('IN: expected TIMESTAMP, found JSON.');
    await expect(printed('select s from t union all select n from t')).rejects.toThrow('Column 1 of UNION has kinds text and integer.');
  });

  it('unnest: DuckDB a column per alias, ClickHouse the combinations of flattened paths; joins and EXISTS on DuckDB only', async () => {
    expect(await printed('select m.level from t cross join unnest(metadata) as m')).toEqual({
      duckdb:
        'SELECT nullif(CASE WHEN "t"."__bq_a1" IS NULL THEN json_extract("t"."metadata", \'$."level"\') ELSE json_extract("t"."__bq_a1", \'$."level"\') END, CAST(\'null\' AS JSON)) AS "level" FROM (SELECT *, unnest(CASE WHEN contains("metadata", \'[\') THEN CASE WHEN json_type("metadata") = \'ARRAY\' THEN CASE WHEN json_array_length("metadata") > 0 THEN json_extract("metadata", \'$[*]\') ELSE [CAST(NULL AS JSON)] END ELSE ["metadata"] END ELSE [NULL] END) AS "__bq_a1" FROM "t" AS "t") AS "t"',
      clickhouse:
        "SELECT __c1 AS `level` FROM (SELECT nullIf(nullIf(arrayElement(`t`.`_metadata_values`, indexOf(`t`.`_metadata_paths`, concat(tupleElement(`t`.`__bq_unnest`, 1), '.level'))), ''), 'null') AS __c1 FROM (SELECT *, tuple('') AS `__bq_unnest` FROM `t` AS `t` WHERE position(ifNull(`metadata`, ''), '[') = 0 UNION ALL SELECT *, arrayJoin(arrayMap(__a1 -> tuple(__a1), if(startsWith(if('' = '', ifNull(`metadata`, ''), arrayElement(`_metadata_values`, indexOf(`_metadata_paths`, ''))), '['), if(empty(arrayFilter(p -> startsWith(p, concat('', '[')) AND match(substring(p, length('') + 2), '^[0-9]+\\\\]$'), `_metadata_paths`)), ['\\0'], arrayFilter(p -> startsWith(p, concat('', '[')) AND match(substring(p, length('') + 2), '^[0-9]+\\\\]$'), `_metadata_paths`)), ['']))) AS `__bq_unnest` FROM `t` AS `t` WHERE NOT (position(ifNull(`metadata`, ''), '[') = 0)) AS `t`)",
    });
    expect(await printed('select a.id from t as a join t as b on a.id = b.id')).toEqual({
      duckdb: 'SELECT "a"."id" AS "id" FROM "t" AS "a" INNER JOIN "t" AS "b" ON ("a"."id" = "b"."id")',
      clickhouse: 'refused: A JOIN of two tables or subqueries is not supported by the ClickHouse engine.',
    });
    expect(await printed('select id from t where exists (select 1 from t as u where u.n > 1)')).toEqual({
      duckdb: 'SELECT "t"."id" AS "id" FROM "t" AS "t" WHERE (EXISTS (SELECT 1 AS "f0_" FROM "t" AS "u" WHERE ("u"."n" > 1)))',
      clickhouse: 'refused: EXISTS is not supported by the ClickHouse engine.',
    });
  });
});

describe('the DuckDB text, run', () => {
  // Every combination of TRUE, FALSE and NULL for b1 and b2; numbers at the edges of rounding.
  const ROWS: Array<{ id: string; timestamp: string; b1: boolean | null; b2: boolean | null; n: number | null; x: number | null; s: string | null }> = [
    { id: 'a', timestamp: '2026-11-20 10:00:00', b1: true, b2: true, n: 1, x: 2.5, s: 'a_b' },
    { id: 'b', timestamp: '2026-11-20 10:00:01.5', b1: true, b2: false, n: 2, x: -2.5, s: 'ab' },
    { id: 'c', timestamp: '1969-12-31 23:59:59.5', b1: true, b2: null, n: null, x: 0.5, s: 'a\nb' },
    { id: 'd', timestamp: '2026-11-20 09:59:58.5', b1: false, b2: true, n: 0, x: -0.5, s: 'axb' },
    { id: 'e', timestamp: '2026-11-20 10:00:00', b1: false, b2: false, n: 3, x: 1.5, s: null },
    { id: 'f', timestamp: '2026-11-20 10:00:00', b1: false, b2: null, n: -7, x: 0.49999999999999994, s: '2.5' },
    { id: 'g', timestamp: '2026-11-20 10:00:00', b1: null, b2: true, n: 5, x: 4503599627370497, s: '-2.5' },
    { id: 'h', timestamp: '2026-11-20 10:00:00', b1: null, b2: false, n: 6, x: null, s: 'A_B' },
    { id: 'i', timestamp: '2026-11-20 10:00:00', b1: null, b2: null, n: 7, x: -3.5, s: 'a%b' },
  ];
  let instance: DuckDBInstance;
  let connection: DuckDBConnection;
  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    connection = await instance.connect();
    const sqlValue = (v: unknown) => (v === null ? 'NULL' : typeof v === 'string' ? `'${v.replaceAll("'", "''")}'` : String(v));
    const rows = ROWS.map((r) => `(${[r.id, r.timestamp, r.b1, r.b2, r.n, r.x, r.s].map(sqlValue).join(', ')})`);
    await connection.run(
      `CREATE TABLE t AS SELECT id, CAST(ts AS TIMESTAMP) AS timestamp, b1, b2, CAST(n AS BIGINT) AS n, CAST(x AS DOUBLE) AS x, s, CAST(NULL AS JSON) AS metadata FROM (VALUES ${rows.join(', ')}) AS v(id, ts, b1, b2, n, x, s)`,
    );
  });
  afterAll(() => {
    connection?.closeSync();
    instance?.closeSync();
  });

  /** One value per row (by id), from the text the sandbox checked and DuckDB runs. */
  const run = async (expr: string, order = ' order by id'): Promise<unknown[]> => {
    const checked = await checkBigQueryText(`select ${expr} as v from t${order}`, SCHEMA, 'duckdb', { tables: ['t'], maxRows: 100 }, neutralSqlParser);
    return (await connection.runAndReadAll(checked.sql)).getRowsJS().map((row) => (typeof row[0] === 'bigint' ? Number(row[0]) : row[0]));
  };

  it('answers AND, OR and NOT with three values: false wins AND, true wins OR, NULL otherwise', async () => {
    const or = (a: boolean | null, b: boolean | null) => (a === true || b === true ? true : a === null || b === null ? null : false);
    const and = (a: boolean | null, b: boolean | null) => (a === false || b === false ? false : a === null || b === null ? null : true);
    expect(await run('b1 or b2')).toEqual(ROWS.map((r) => or(r.b1, r.b2)));
    expect(await run('b1 and b2')).toEqual(ROWS.map((r) => and(r.b1, r.b2)));
    expect(await run('not (b1 or b2)')).toEqual(ROWS.map((r) => (or(r.b1, r.b2) === null ? null : !or(r.b1, r.b2))));
  });

  it('rounds half away from zero, as BigQuery, exactly (0.49999999999999994 to 0, 2^52 + 1 kept)', async () => {
    const expected = [3, -3, 1, -1, 2, 0, 4503599627370497, null, -4];
    expect(await run('round(x)')).toEqual(expected);
    expect(await run('cast(x as int64)')).toEqual(expected);
    expect(await run('safe_cast(s as int64)')).toEqual([null, null, null, null, null, 3, -3, null, null]);
  });

  it('answers IN, CASE, LIKE and REGEXP_CONTAINS as BigQuery', async () => {
    expect(await run('n in (1, 2.5, 3)')).toEqual([true, false, null, false, true, false, false, false, false]);
    expect(await run('case when n > 1 then x when b1 then n end')).toEqual([1, -2.5, null, null, 1.5, null, 4503599627370497, null, -3.5]);
    expect(await run("s like 'a\\\\_b'")).toEqual([true, false, false, false, null, false, false, false, false]);
    expect(await run("regexp_contains(s, '^a.b$')")).toEqual([true, false, false, true, null, false, false, false, true]);
  });

  it('APPROX_QUANTILES(x, n)[OFFSET(k)]: the minimum at 0, the maximum at n, the value at ceil(k * count / n) between; NULL of no value', async () => {
    const one = async (expr: string) => (await run(expr, ''))[0];
    // x sorted, NULL left out: -3.5, -2.5, -0.5, 0.49999999999999994, 0.5, 1.5, 2.5, 4503599627370497 (8 values)
    expect(await one('approx_quantiles(x, 100)[offset(0)]')).toBe(-3.5);
    expect(await one('approx_quantiles(x, 100)[offset(100)]')).toBe(4503599627370497);
    expect(await one('approx_quantiles(x, 4)[offset(1)]')).toBe(-2.5);
    expect(await one('approx_quantiles(x, 100)[offset(50)]')).toBe(0.49999999999999994);
    expect(await one('approx_quantiles(x, 100)[offset(51)]')).toBe(0.5);
    expect(await one('approx_quantiles(if(n > 100, x, null), 100)[offset(50)]')).toBeNull();
    // The whole array, through the sandbox's check at its largest n (250): value k is [OFFSET(k)]'s.
    const sorted = [-3.5, -2.5, -0.5, 0.49999999999999994, 0.5, 1.5, 2.5, 4503599627370497];
    const every = Array.from({ length: 251 }, (_, k) => sorted[Math.max(1, Math.ceil((k * 8) / 250)) - 1]);
    expect(JSON.parse(String(await one('approx_quantiles(x, 250)')))).toEqual(every);
    expect(JSON.parse(String(await one('approx_quantiles(x, 4)')))).toEqual([-3.5, -2.5, 0.49999999999999994, 1.5, 4503599627370497]);
    expect(await one('approx_quantiles(if(n > 100, x, null), 4)')).toBeNull();
  });

  it('prints CAST(timestamp AS STRING) as BigQuery: no trailing zeros in the fraction, none when whole, before 1970 too', async () => {
    expect(await run('cast(timestamp as string)')).toEqual([
      '2026-11-20 10:00:00+00',
      '2026-11-20 10:00:01.5+00',
      '1969-12-31 23:59:59.5+00',
      '2026-11-20 09:59:58.5+00',
      ...Array(5).fill('2026-11-20 10:00:00+00'),
    ]);
    expect(await run("cast(timestamp '2026-11-28T10:00:00.123456Z' as string)", ' limit 1')).toEqual(['2026-11-28 10:00:00.123456+00']);
    expect(await run("cast(timestamp '2026-11-28T10:00:00.1204Z' as string)", ' limit 1')).toEqual(['2026-11-28 10:00:00.1204+00']);
  });

  it('counts whole units towards zero (TIMESTAMP_DIFF) and seconds down before 1970 (UNIX_SECONDS)', async () => {
    expect(await run("timestamp_diff(timestamp, timestamp '2026-11-20T10:00:00Z', second)")).toEqual([0, 1, -1795168800, -1, 0, 0, 0, 0, 0]);
    expect((await run('unix_seconds(timestamp)'))[2]).toBe(-1);
    // Exact far from 1970, where a DOUBLE quotient of the microseconds is not.
    expect(await run("unix_seconds(timestamp '2500-01-01T00:00:00.999999Z')", ' limit 1')).toEqual([16725225600]);
    expect(await run("unix_millis(timestamp '2500-01-01T00:00:00.999999Z')", ' limit 1')).toEqual([16725225600999]);
    expect(await run("unix_seconds(timestamp '1000-01-01T00:00:00.000001Z')", ' limit 1')).toEqual([-30610224000]);
  });
});

describe('TIMESTAMP_TRUNC in DuckDB, run', () => {
  // The edges of the integer arithmetic printed for a column (print-duckdb.ts, `bucket`): NULL,
  // the infinities, the smallest and largest finite timestamps, each side of 1970 and of a unit's
  // boundary, and a spread over the whole range and over the days around 1970.
  const EDGES = [
    'infinity',
    '-infinity',
    '290309-12-22 (BC) 00:00:00',
    '290309-12-22 (BC) 00:00:00.000001',
    '294247-01-10 04:00:54.775806',
    '1969-12-31 23:59:59.999999',
    '1969-12-31 23:59:59',
    '1969-12-31 23:00:00',
    '1969-12-31 22:59:59.999999',
    '1969-12-31 00:00:00',
    '1970-01-01 00:00:00',
    '1970-01-01 00:00:00.000001',
    '1970-01-01 00:59:59.999999',
    '1900-03-04 05:06:07.089',
    '0001-01-01 (BC) 12:34:56.789012',
    '2000-02-29 12:00:00.5',
    '2026-11-20 10:59:59.999999',
    '2026-11-20 11:00:00',
  ];
  let instance: DuckDBInstance;
  let connection: DuckDBConnection;
  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    connection = await instance.connect();
    const edges = EDGES.map((e, i) => `(${i}, CAST('${e}' AS TIMESTAMP))`).join(', ');
    // A status of three values ('x', 'y', none), a typed field's columns, for the charts' counts.
    const row = (id: string, ts: string, i: string) =>
      `SELECT ${id} AS id, ${ts} AS timestamp, s AS status, CAST(CASE WHEN s IS NULL THEN '{}' ELSE '{"status":"' || s || '"}' END AS JSON) AS metadata, false AS "arrays:metadata", s AS "text:metadata.status", CAST('"' || s || '"' AS JSON) AS "json:metadata.status" FROM (SELECT *, ['x', 'y', NULL][((${i} % 3) + 3) % 3 + 1] AS s`;
    await connection.run(`CREATE TABLE t AS ${row('CAST(i AS VARCHAR)', 'ts', 'i')} FROM (VALUES (-1, NULL), ${edges}) AS v(i, ts))`);
    await connection.run(`INSERT INTO t ${row("'w' || i", 'make_timestamp(i * 4611686018427387 + i * i * 7919)', 'i')} FROM range(-2000, 2000) AS r(i))`);
    await connection.run(`INSERT INTO t ${row("'n' || i", 'make_timestamp(i * 1234567891)', 'i')} FROM range(-1000, 1000) AS r(i))`);
  });
  afterAll(() => {
    connection?.closeSync();
    instance?.closeSync();
  });

  const rows = async (sql: string) => (await connection.runAndReadAll(sql)).getRowsJson().map((row) => row[0]);

  it('is date_trunc exactly, for every unit, on NULL, the infinities, before 1970 and at the edges of the range', async () => {
    for (const unit of ['microsecond', 'millisecond', 'second', 'minute', 'hour', 'day']) {
      const checked = await checkBigQueryText(`select timestamp_trunc(timestamp, ${unit}) as v from t order by id`, SCHEMA, 'duckdb', { tables: ['t'], maxRows: 10_000 }, neutralSqlParser);
      // The integer arithmetic is what runs (no test of it otherwise).
      expect(checked.sql).toContain('epoch_us("t"."timestamp")');
      const exact = await rows(`SELECT date_trunc('${unit}', timestamp) FROM t ORDER BY id`);
      expect(exact).toHaveLength(EDGES.length + 1 + 4000 + 2000);
      expect(exact).toContain('infinity');
      expect(await rows(checked.sql)).toEqual(exact);
    }
  });

  it("is date_trunc exactly as a chart's counts in two steps group by it (a number per bucket), for every unit", async () => {
    const field = { text: 'text:metadata.status', json: 'json:metadata.status', declared: true };
    const typed: BigQuerySchema = {
      tables: { t: { columns: { id: 'text', timestamp: 'timestamp', metadata: 'json' }, typed: { metadata: { arrays: 'arrays:metadata', fields: { [jsonKeysText(['status'])]: field } } } } },
    };
    for (const unit of ['microsecond', 'millisecond', 'second', 'minute', 'hour', 'day']) {
      const chart = `select timestamp_trunc(t.timestamp, ${unit}) as b, count(case when m.status = 'x' then 1 end) as x, count(case when m.status = 'y' then 1 end) as y from t cross join unnest(metadata) as m group by b order by b`;
      const checked = await checkBigQueryText(chart, typed, 'duckdb', { tables: ['t'], maxRows: 10_000 }, neutralSqlParser);
      // Counted in two steps (src/bigquery/counts-per-value.ts), the first keyed on the bucket's number.
      expect(checked.sql).toContain('count(*) AS "__bq_n"');
      expect(checked.sql).toContain('epoch_us("t"."timestamp") // ');
      const exact = await connection.runAndReadAll(
        `SELECT date_trunc('${unit}', timestamp) AS b, count(CASE WHEN status = 'x' THEN 1 END), count(CASE WHEN status = 'y' THEN 1 END) FROM t GROUP BY b ORDER BY b NULLS FIRST`,
      );
      const buckets = exact.getRowsJson();
      // Each side of 1970, the infinities and NULL in buckets of their own.
      expect(buckets.map((r) => r[0])).toEqual(
        expect.arrayContaining([null, 'infinity', '-infinity', '1969-12-31 23:00:00', '1970-01-01 00:00:00'].filter((b) => unit === 'hour' || b === null || b.includes('infinity'))),
      );
      expect((await connection.runAndReadAll(checked.sql)).getRowsJson()).toEqual(buckets);
    }
  });

  it("keeps NULL apart where DuckDB's statistics decide the conditions (every other timestamp after 1970)", async () => {
    // Over a table whose timestamps are all finite and after 1970, DuckDB folds `epoch_us(t) >= 0`
    // and `t > make_timestamp(0)` to constants that are still NULL on a NULL row.
    await connection.run(`CREATE TABLE late AS SELECT * FROM t WHERE id = '-1' OR timestamp BETWEEN TIMESTAMP '1970-01-01' AND TIMESTAMP '2100-01-01'`);
    const count = "count(case when m.status = 'x' then 1 end) as x, count(case when m.status = 'y' then 1 end) as y";
    const texts = [
      `select timestamp_trunc(t.timestamp, hour) as b from t order by id`,
      `select timestamp_trunc(t.timestamp, hour) as b, ${count} from t cross join unnest(metadata) as m group by b order by b`,
    ];
    const field = { text: 'text:metadata.status', json: 'json:metadata.status', declared: true };
    const typed: BigQuerySchema = {
      tables: { t: { columns: { id: 'text', timestamp: 'timestamp', metadata: 'json' }, typed: { metadata: { arrays: 'arrays:metadata', fields: { [jsonKeysText(['status'])]: field } } } } },
    };
    const [rowsText, chartText] = await Promise.all(
      texts.map(async (sql) => (await checkBigQueryText(sql, typed, 'duckdb', { tables: ['t'], maxRows: 10_000 }, neutralSqlParser)).sql.replaceAll('FROM "t" AS', 'FROM "late" AS')),
    );
    const buckets = await rows(`SELECT date_trunc('hour', timestamp) FROM late ORDER BY id`);
    expect(buckets).toContain(null);
    expect(await rows(rowsText!)).toEqual(buckets);
    const chart = (await connection.runAndReadAll(chartText!)).getRowsJson();
    expect(chart[0]).toEqual([null, '0', '0']);
    expect(chart).toEqual(
      (
        await connection.runAndReadAll(
          `SELECT date_trunc('hour', timestamp) AS b, count(CASE WHEN status = 'x' THEN 1 END), count(CASE WHEN status = 'y' THEN 1 END) FROM late GROUP BY b ORDER BY b NULLS FIRST`,
        )
      ).getRowsJson(),
    );
  });

  it('is date_trunc itself of an expression that is not a column, printed once', async () => {
    expect((await value('timestamp_trunc(timestamp_add(timestamp, interval 1 hour), day)')).duckdb).toBe('date_trunc(\'day\', make_timestamp(epoch_us("t"."timestamp") + 3600000000))');
  });
});
