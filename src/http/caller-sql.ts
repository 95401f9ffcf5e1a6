import { InvalidBodyError, InvalidParameterError } from '../errors';
import { readBody } from '../ingest/read-body';
import type { PlainRequest } from './exchange';

/** Largest JSON body carrying a caller's SQL (well above the SQL's own length limit). */
export const MAX_SQL_BODY_BYTES = 256 * 1024;

/** A caller's SQL and where it came from (an answer to a body is never reused by URL). */
export interface CallerSql {
  sql: string;
  inBody: boolean;
}

/**
 * The caller's SQL of a query request (docs/sandboxing.md): `sql` in the query string, or in a
 * JSON body `{"sql": "..."}` sent with GET or POST; null when there is none. The endpoint's
 * parameters stay in the query string. Both places at once is refused: which one was meant is
 * unknowable.
 *
 * @example
 * await callerSql(request, params.sql); // { sql: 'select count(*) from edge_logs', inBody: true }
 */
export async function callerSql(request: PlainRequest, inQuery: string | undefined): Promise<CallerSql | null> {
  const chunks = request.body?.() ?? null;
  const body = chunks === null ? Buffer.alloc(0) : await readBody(chunks, { contentEncoding: request.header('content-encoding'), maxBytes: MAX_SQL_BODY_BYTES });
  const inBody = body.length === 0 ? undefined : sqlOfBody(body);
  if (inBody !== undefined && inQuery !== undefined) {
    throw new InvalidParameterError('sql', 'Send sql once: in the query string or in the JSON body, not both.');
  }
  if (inBody !== undefined) return { sql: inBody, inBody: true };
  return inQuery === undefined ? null : { sql: inQuery, inBody: false };
}

/** Whether a request says it has a body (GET bodies are read only then). */
export function declaresBody(header: (name: string) => string | null | undefined): boolean {
  const length = header('content-length');
  return (length !== null && length !== undefined && length.trim() !== '0') || !!header('transfer-encoding');
}

function sqlOfBody(body: Buffer): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new InvalidBodyError('The body must be JSON: {"sql": "select ..."}.', { cause: error });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidBodyError('The body must be a JSON object: {"sql": "select ..."}.');
  }
  const sql = (parsed as Record<string, unknown>).sql;
  if (sql !== undefined && typeof sql !== 'string') throw new InvalidParameterError('sql', 'sql must be a string.');
  return sql;
}
