import { InternalError } from '../util/internal-error';
import { LogEndpointsError } from '../errors';
import type { QueryResult } from '../api/create-endpoints';
import type { ColumnSpec } from '../definitions/definition';
import { arrowToIpcStream } from '../rows/to-arrow';
import { rowsToCsv } from '../rows/to-csv';
import { rowsToNdjson } from '../rows/to-ndjson';
import type { Table } from 'apache-arrow';
import type { PlainResponse } from './exchange';
import { CONTENT_TYPES, type OutputFormat } from './negotiate-format';
import { stringifyExactJson } from '../util/exact-json';

const JSON_TYPE = CONTENT_TYPES.json;
const encoder = new TextEncoder();

/** A response whose body is known in full, with its Content-Length (HEAD answers keep it). */
export function send(status: number, body: string | Uint8Array, headers: Record<string, string>): PlainResponse {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  headers['Content-Length'] = String(bytes.byteLength);
  return { status, headers, body: bytes };
}

/** A JSON answer that is not a query result (definitions, OpenAPI, health). */
export function sendJson(status: number, value: unknown, cacheControl = 'no-store'): PlainResponse {
  return send(status, stringifyExactJson(value), { 'Content-Type': JSON_TYPE, 'Cache-Control': cacheControl });
}

/** The answer to a query in the negotiated format, with the cache and timing headers. */
export function sendResult(result: QueryResult & { table?: Table }, columns: readonly ColumnSpec[], format: OutputFormat): PlainResponse {
  const headers: Record<string, string> = {
    'Content-Type': CONTENT_TYPES[format],
    'X-Cache': result.cache.toUpperCase(),
    'Cache-Control':
      // private: the answer depends on an API key, so shared caches must not hand it to others.
      result.ttlRemainingSeconds === null ? 'no-store' : `private, max-age=${Math.floor(result.ttlRemainingSeconds)}`,
    'Server-Timing': `engine;dur=${result.engineMs.toFixed(1)}`,
    Vary: 'Accept',
  };
  if (result.skippedFiles.length) headers['X-Skipped-Files'] = skippedFilesHeader(result.skippedFiles);
  return send(200, body(result, columns, format), headers);
}

/**
 * `X-Skipped-Files`: the files an answer left out and why, as `<name>;reason=<code>` items
 * separated by commas. A name is the file's last two path segments (enough to find it, without
 * the server's folder layout), percent-encoded so the header stays ASCII.
 */
export function skippedFilesHeader(files: QueryResult['skippedFiles']): string {
  return files.map((f) => `${encodeURIComponent(f.path.split(/[\\/]/).slice(-2).join('/')).replaceAll('%2F', '/')};reason=${f.reason}`).join(', ');
}

function body(result: QueryResult & { table?: Table }, columns: readonly ColumnSpec[], format: OutputFormat): string | Uint8Array {
  switch (format) {
    case 'json':
      // Integers past 2^53 in metadata are bigint: written as their digits.
      return stringifyExactJson({ result: result.result });
    case 'csv':
      return rowsToCsv(columns, result.result);
    case 'ndjson':
      return rowsToNdjson(columns, result.result);
    case 'arrow':
      // The query asked the engine for a table when the format is Arrow.
      if (!result.table) throw new InternalError('invariant', 'An Arrow answer needs the table of the result.');
      return arrowToIpcStream(result.table);
  }
}

/** Whatever was thrown, as the error body of docs/http.md, "Errors". Anything unexpected is a generic 500. */
export function errorOf(error: unknown): LogEndpointsError {
  if (error instanceof LogEndpointsError) return error;
  return new LogEndpointsError('query_failed', 500, 'The request failed on the server.', { cause: error });
}

export function sendError(error: LogEndpointsError, extra?: Record<string, string>): PlainResponse {
  const headers: Record<string, string> = { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-store', ...extra };
  if (error.status === 503) headers['Retry-After'] = String(Math.max(1, Math.ceil(error.retryAfterSeconds ?? 1)));
  return send(error.status, JSON.stringify({ error: error.toJSON() }), headers);
}
