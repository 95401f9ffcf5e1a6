/**
 * Every error the library throws on purpose is a `LogEndpointsError`: it carries a stable
 * machine-readable `code`, the HTTP `status` the HTTP adapter answers with, and the original
 * `cause` when there is one. Messages are safe to show to callers: they never contain SQL text
 * or file paths (those stay on `cause`, for your logger).
 *
 * @example
 * try { await ep.query('usage.api-counts', { project: 'abc' }) }
 * catch (e) { if (e instanceof LogEndpointsError) console.log(e.code, e.status) }
 */
export class LogEndpointsError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Seconds after which retrying makes sense (set on `overloaded`). */
  readonly retryAfterSeconds?: number;

  constructor(code: ErrorCode, status: number, message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = status;
    if (options?.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** The JSON error body of the HTTP API (contract §6). */
  toJSON(): { code: ErrorCode; message: string; status: number; param?: string } {
    return { code: this.code, message: this.message, status: this.status };
  }
}

/** Stable error codes; the HTTP status of each is fixed (contract §6). */
export type ErrorCode =
  | 'invalid_parameter'
  | 'unauthorized'
  | 'not_found'
  | 'method_not_allowed'
  // HTTP only: a request the adapter cannot read (malformed percent-encoding) or a URL past its limit (414).
  | 'bad_request'
  | 'uri_too_long'
  | 'query_failed'
  | 'overloaded'
  | 'timeout'
  | 'closed'
  // An option of createEndpoints (or of a store, a server) that cannot work; thrown at start-up.
  | 'invalid_option';

/**
 * A parameter is missing, empty where it is required, too long or has a value the endpoint
 * cannot use. `param` names it.
 *
 * @example
 * await ep.usageApiCounts({ project: 'abc', interval: 'weekly' }) // throws, e.param === 'interval'
 */
export class InvalidParameterError extends LogEndpointsError {
  readonly param: string;
  constructor(param: string, message: string, options?: { cause?: unknown }) {
    super('invalid_parameter', 400, message, options);
    this.param = param;
  }
  override toJSON() {
    return { ...super.toJSON(), param: this.param };
  }
}

/**
 * No endpoint has that name or UUID.
 *
 * @example
 * await ep.query('no.such-endpoint', {}) // throws NotFoundError (404)
 */
export class NotFoundError extends LogEndpointsError {
  constructor(message: string) {
    super('not_found', 404, message);
  }
}

/**
 * The engine could not answer: a failed query (`query_failed`, 500), too many queries waiting
 * (`overloaded`, 503), a query past its time limit (`timeout`, 504), or a call after `close()`
 * (`closed`, 503). The message is generic; `cause` holds the engine's own error.
 *
 * @example
 * catch (e) { if (e instanceof EngineError && e.code === 'overloaded') retryIn(e.retryAfterSeconds) }
 */
export class EngineError extends LogEndpointsError {
  constructor(
    code: 'query_failed' | 'overloaded' | 'timeout' | 'closed',
    message: string,
    options?: { cause?: unknown; retryAfterSeconds?: number },
  ) {
    super(code, STATUS[code], message, options);
  }
}

/**
 * An option that cannot work, found when the endpoints (or a store, or a server) are created
 * rather than deep inside the first query. `option` names it as you wrote it (`limits.maxConcurrentQueries`).
 *
 * @example
 * await createEndpoints({ sources, limits: { maxConcurrentQueries: 0 } })
 * // throws InvalidOptionError: code 'invalid_option', option 'limits.maxConcurrentQueries'
 */
export class InvalidOptionError extends LogEndpointsError {
  readonly option: string;
  constructor(option: string, message: string, options?: { cause?: unknown }) {
    // A configuration mistake of the server, never something a caller sent: 500 if it ever reaches HTTP.
    super('invalid_option', 500, message, options);
    this.option = option;
  }
  override toJSON() {
    return { ...super.toJSON(), option: this.option };
  }
}

const STATUS = { query_failed: 500, overloaded: 503, timeout: 504, closed: 503 } as const;
