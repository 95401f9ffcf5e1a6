import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import type { EngineParam } from '../engine';
import { bindParams, type BoundQuery } from './bind-params';

/** What the server can do, found out once per connection (see `probeServer`). */
export interface ServerFeatures {
  version: string;
  /**
   * Whether the server binds `{name:Type}` query parameters (19.x and later). Without them,
   * text values travel as external data.
   */
  queryParameters: boolean;
}

/** One statement to run: SQL with `{name:Type}` placeholders and their values. */
export interface SqlRequest {
  sql: string;
  params: Readonly<Record<string, EngineParam>>;
  settings?: Readonly<Record<string, string | number>>;
  signal?: AbortSignal;
  queryId?: string;
}

/** A result in ClickHouse's `JSON` format: column names and types, then rows as objects. */
export interface JsonResult {
  meta: Array<{ name: string; type: string }>;
  data: Array<Record<string, unknown>>;
}

/**
 * `FORMAT JSON` writes 64-bit integers as strings, exact: the default until ClickHouse 25.8,
 * which writes bare numbers that JSON.parse rounds past 2^53 (a timestamp in microseconds after
 * 2255). Asked for on every query, so no server default (and no `settings` option) changes it;
 * 18.16 knows the setting too.
 */
const EXACT_JSON = { output_format_json_quote_64bit_integers: 1 } as const;

/**
 * Runs a SELECT and reads its whole answer. `wait_end_of_query=1` makes the server finish
 * before it sends anything, so an error is an HTTP error, never a broken JSON body (a query that
 * fails after its first block would otherwise end the stream in the middle of the JSON). Pass
 * `features: null` only for a query without placeholders (the probe itself).
 */
export async function runSql(client: ClickHouseClient, features: ServerFeatures | null, request: SqlRequest): Promise<JsonResult> {
  const bound = bindParams(request.sql, request.params, features?.queryParameters ?? false);
  const text = await exec(client, bound, `${bound.sql}\nFORMAT JSON`, { ...request, settings: { ...request.settings, ...EXACT_JSON } });
  return JSON.parse(text) as JsonResult;
}

/** Runs a statement that answers nothing (DDL). */
export async function runCommand(client: ClickHouseClient, sql: string, settings?: SqlRequest['settings']): Promise<void> {
  await exec(client, { sql }, sql, { sql, params: {}, settings });
}

/**
 * Inserts rows already encoded in ClickHouse's RowBinary format. Binary, not text: ClickHouse
 * 18.16 parses floating-point text to the nearest double only most of the time (one unit off in
 * the last place now and then), and execution times must arrive exactly.
 */
export async function insertRowBinary(
  client: ClickHouseClient,
  table: string,
  columns: readonly string[],
  body: Buffer,
  settings?: SqlRequest['settings'],
  options: { queryId?: string; midway?: () => void } = {},
): Promise<void> {
  const result = await client.exec({
    query: `INSERT INTO ${table} (${columns.join(', ')}) FORMAT RowBinary`,
    values: Readable.from(options.midway ? halves(body, options.midway) : [body]),
    clickhouse_settings: { ...settings },
    http_headers: sized(body, 'application/octet-stream'),
    ...(options.queryId ? { query_id: options.queryId } : {}),
  });
  await drain(result.stream);
}

/** The body in two halves with `midway` called between them (crash tests stop an insert there). */
async function* halves(body: Buffer, midway: () => void): AsyncGenerator<Buffer> {
  const half = body.length >> 1;
  yield body.subarray(0, half);
  await new Promise((resolve) => setImmediate(resolve));
  midway();
  yield body.subarray(half);
}

async function exec(client: ClickHouseClient, bound: BoundQuery, query: string, request: SqlRequest): Promise<string> {
  const external = bound.externalData ? multipart(bound.externalData) : undefined;
  const result = await client.exec({
    query,
    query_id: request.queryId ?? randomUUID(),
    clickhouse_settings: { wait_end_of_query: 1, ...request.settings } as ClickHouseSettings,
    ...(bound.queryParams ? { query_params: bound.queryParams } : {}),
    ...(request.signal ? { abort_signal: request.signal } : {}),
    // External data is a multipart body; the client then sends the query in the URL.
    ...(external ? { values: Readable.from([external.body]), http_headers: sized(external.body, external.contentType) } : {}),
  });
  return readAll(result.stream);
}

/**
 * The multipart/form-data body of ClickHouse's external data: the table's structure as a form
 * field before the file part holding its TabSeparated rows.
 */
export function multipart(data: NonNullable<BoundQuery['externalData']>): { body: Buffer; contentType: string } {
  let boundary = `----log-endpoints-${randomUUID()}`;
  // The delimiter must not occur in the data; with a random UUID it practically never does.
  while (data.tsv.includes(boundary)) boundary = `----log-endpoints-${randomUUID()}`;
  const body = [
    `--${boundary}\r\nContent-Disposition: form-data; name="${data.name}_structure"\r\n\r\n${data.structure}\r\n`,
    `--${boundary}\r\nContent-Disposition: form-data; name="${data.name}_format"\r\n\r\nTabSeparated\r\n`,
    `--${boundary}\r\nContent-Disposition: form-data; name="${data.name}"; filename="${data.name}.tsv"\r\n`,
    'Content-Type: text/tab-separated-values\r\n\r\n',
    data.tsv,
    `\r\n--${boundary}--\r\n`,
  ].join('');
  return { body: Buffer.from(body, 'utf8'), contentType: `multipart/form-data; boundary=${boundary}` };
}

/**
 * Headers of a request body sent whole with its length. A stream body would go chunked, and
 * ClickHouse 18.16 leaves the end of a chunked multipart body unread: the next request on the
 * kept-alive socket then fails with "socket hang up".
 */
function sized(body: Buffer, contentType: string): Record<string, string> {
  return { 'Content-Type': contentType, 'Content-Length': String(body.length) };
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

async function drain(stream: NodeJS.ReadableStream): Promise<void> {
  for await (const _ of stream) void _;
}
