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

  /** The JSON error body of the HTTP API (docs/http.md, "Errors"). */
  toJSON(): { code: ErrorCode; message: string; status: number; param?: string; index?: number; rule?: string } {
    return { code: this.code, message: this.message, status: this.status };
  }
}

/** Stable error codes; the HTTP status of each is fixed (docs/semantics.md, "Errors and statuses"). */
export type ErrorCode =
  | 'invalid_parameter'
  // A caller's SQL (`sql`, sandboxed endpoints) that breaks a sandbox rule or does not run (docs/sandboxing.md).
  | 'invalid_sql'
  | 'unauthorized'
  | 'not_found'
  | 'method_not_allowed'
  // HTTP only: a request the adapter cannot read (malformed percent-encoding) or a URL past its limit (414).
  | 'bad_request'
  | 'uri_too_long'
  // Ingest (docs/ingest.md): a body that is not a batch of events, one past the size limit, an encoding we cannot read.
  | 'invalid_body'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'query_failed'
  | 'overloaded'
  | 'memory_limit'
  | 'timeout'
  | 'closed'
  // Managed storage could not write or fsync (an I/O error other than a full disk).
  | 'storage_failed'
  // Managed storage's data dir is written by another live process (DataDirLockedError, at start-up).
  | 'data_dir_locked'
  // An option of createEndpoints (or of a store, a server, a command) that cannot work.
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
 * A caller's SQL sent to a sandboxable endpoint (`sql`) that is refused before it runs, because
 * it breaks a sandbox rule (`rule` names which), or that the engine could not run (`rule` is
 * `query`). The message says what to change; it never holds a file path, a setting or an
 * environment value. The rules are in docs/sandboxing.md.
 *
 * @example
 * await ep.query('logs.all', params, { sql: "select * from read_text('/etc/passwd')" })
 * // throws InvalidSqlError: code 'invalid_sql', status 400, rule 'table_function'
 */
export class InvalidSqlError extends LogEndpointsError {
  readonly rule: SandboxRule;
  constructor(rule: SandboxRule, message: string, options?: { cause?: unknown }) {
    super('invalid_sql', 400, message, options);
    this.rule = rule;
  }
  override toJSON() {
    return { ...super.toJSON(), rule: this.rule };
  }
}

/** The sandbox rules a caller's SQL can break (docs/sandboxing.md, "The rules"). */
export type SandboxRule = 'too_long' | 'syntax' | 'one_statement' | 'select_only' | 'table' | 'table_function' | 'function' | 'parameter' | 'construct' | 'type' | 'too_large' | 'query';

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
 * An ingest request or `ep.ingest` call whose events cannot be taken: the body is not JSON, not a
 * batch of event objects, or an event has a field of the wrong kind. Nothing of the request is
 * kept. `index` is the position of the bad event in the batch (NDJSON: its line, from 0), when one is to blame.
 *
 * @example
 * await ep.ingest('cloudflare.logs.prod', [{ message: 'ok' }, { timestamp: 'yesterday' }]) // throws, e.index === 1
 */
export class InvalidBodyError extends LogEndpointsError {
  readonly index?: number;
  constructor(message: string, options?: { index?: number; cause?: unknown }) {
    super('invalid_body', 400, message, options);
    if (options?.index !== undefined) this.index = options.index;
  }
  override toJSON() {
    return this.index === undefined ? super.toJSON() : { ...super.toJSON(), index: this.index };
  }
}

/**
 * An ingest body past the size limit (12 MiB after decompression by default): 413. Reading and
 * decompressing stop at the limit, so a small gzip bomb never inflates.
 *
 * @example
 * catch (e) { if (e instanceof PayloadTooLargeError) sendInSmallerBatches() }
 */
export class PayloadTooLargeError extends LogEndpointsError {
  /** The limit that was passed: bytes, or events for a batch with too many. */
  readonly limit: number;
  constructor(limitBytes: number, message?: string) {
    super('payload_too_large', 413, message ?? `The body is larger than ${limitBytes} bytes (after decompression); send smaller batches.`);
    this.limit = limitBytes;
  }
}

/**
 * The engine could not answer: a failed query (`query_failed`, 500), too many queries waiting
 * (`overloaded`, 503), a query that does not fit in the memory budget even alone, or that grew the
 * process past it (`memory_limit`, 503: the server stays up and answers the rest), a query past
 * its time limit (`timeout`, 504), or a call after `close()`
 * (`closed`, 503). For ingest: more data waiting than managed storage's bounds allow, or a full
 * disk (`overloaded`), or a write that failed (`storage_failed`, 500). The message is generic; `cause` holds the engine's own error.
 *
 * @example
 * catch (e) { if (e instanceof EngineError && e.code === 'overloaded') retryIn(e.retryAfterSeconds) }
 */
export class EngineError extends LogEndpointsError {
  constructor(code: 'query_failed' | 'overloaded' | 'memory_limit' | 'timeout' | 'closed' | 'storage_failed', message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
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

const STATUS = { query_failed: 500, overloaded: 503, memory_limit: 503, timeout: 504, closed: 503, storage_failed: 500 } as const;
