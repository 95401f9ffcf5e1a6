import { EngineError } from '../../errors';

/**
 * The ClickHouse error code of an error, or null. Current servers send it in a header the
 * client puts on `error.code`; ClickHouse 18 only writes `Code: N, e.displayText() = ...` into
 * the body, which the client passes on as the message.
 */
export function clickhouseErrorCode(error: unknown): number | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^\d+$/.test(code)) return Number(code);
  if (typeof code === 'number' && Number.isInteger(code)) return code;
  const match = /\bCode: (\d+)/.exec(String((error as Error | null)?.message ?? ''));
  return match ? Number(match[1]) : null;
}

/** Server errors that a retry a little later can get past: answered `overloaded` (503). */
const OVERLOADED = new Set([
  202, // TOO_MANY_SIMULTANEOUS_QUERIES
  241, // MEMORY_LIMIT_EXCEEDED
  173, // CANNOT_ALLOCATE_MEMORY
]);

/** Errors of a connection that could not be made or was cut: the server is away (restarting, down). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND', 'EPIPE', 'ECONNABORTED']);

/**
 * Whether ClickHouse could not be reached at all (no answer, not an error it answered): a retry
 * later can succeed, so the caller gets `overloaded` (503 with Retry-After), never a 500.
 */
export function isUnreachable(error: unknown): boolean {
  for (let e = error as { code?: unknown; cause?: unknown; message?: unknown } | null, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && UNREACHABLE.has(e.code)) return true;
    if (/\b(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ETIMEDOUT)\b|socket hang up/.test(String(e.message ?? ''))) return true;
  }
  return false;
}

/** Server errors of a query past its time limit: answered `timeout` (504). */
const TIMED_OUT = new Set([
  159, // TIMEOUT_EXCEEDED (max_execution_time)
  160, // TOO_SLOW
]);

/**
 * The `EngineError` a failed query becomes, as the DuckDB engine does: `timeout` past the time
 * limit, `overloaded` when the server is short of memory or query slots, `closed` after close,
 * otherwise `query_failed`. Messages are generic (no SQL, no server address); the ClickHouse
 * error stays on `cause`.
 */
export function toEngineError(error: unknown, state: { timedOut: boolean; closed: boolean; timeoutMs: number }): EngineError {
  if (error instanceof EngineError) return error;
  const code = clickhouseErrorCode(error);
  if (state.timedOut || (code !== null && TIMED_OUT.has(code))) {
    return new EngineError('timeout', `The query ran past its time limit of ${state.timeoutMs} ms.`, { cause: error });
  }
  if (state.closed) return new EngineError('closed', 'The endpoints were closed.', { cause: error });
  if (isUnreachable(error)) {
    return new EngineError('overloaded', 'ClickHouse cannot be reached for now; retry shortly.', { cause: error, retryAfterSeconds: 5 });
  }
  if (code !== null && OVERLOADED.has(code)) {
    return new EngineError('overloaded', 'The engine is out of memory or query slots for now; retry shortly.', { cause: error, retryAfterSeconds: 1 });
  }
  return new EngineError('query_failed', 'The query failed in the engine.', { cause: error });
}

/**
 * Why ClickHouse refused a regular expression, without our `(?-s)` prefix or the server's
 * boilerplate: `missing ): (` rather than the whole exception text.
 */
export function patternProblem(error: unknown): string {
  const message = String((error as Error | null)?.message ?? error);
  const detail = /error: (.*?)(?:\. Look at https?:\S+|, e\.what\(\)|$)/s.exec(message)?.[1] ?? message.replace(/^Code: \d+, e\.displayText\(\) = DB::Exception: /, '');
  return detail.replaceAll('(?-s)', '').trim();
}
