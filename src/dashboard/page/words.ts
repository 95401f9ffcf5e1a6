// Pure (no DOM): unit-tested in `npm test`.

/** A data request that did not give rows: what the page knows about it. */
export interface ApiFailure {
  /** HTTP status; 0 when the server could not be reached. */
  status: number;
  code?: string;
  message?: string;
  /** The refused parameter of a 400 `invalid_parameter`. */
  param?: string;
  /** `Retry-After` in seconds, when the server sent it. */
  retryAfterSeconds?: number;
  /** The server's `X-Request-Id`, for finding the details in its log. */
  requestId?: string;
  /** Why the request itself failed (network), when it did. */
  network?: string;
}

/** Every error as a sentence a person can act on; the 401 one asks for the key again. */
export function errorInWords(failure: ApiFailure): string {
  if (failure.network !== undefined) return `The server could not be reached (${failure.network}). Is it still running?`;
  const code = failure.code ? ` ${failure.code}` : '';
  const detail = failure.message ? ` ${failure.message}` : '';
  switch (failure.status) {
    case 401:
      return 'The server did not accept the API key (401 unauthorized). Enter a valid key.';
    case 400:
      if (failure.code === 'invalid_sql') return `The server refused your query (400 invalid_sql):${detail}`;
      return failure.param ? `The server refused the parameter “${failure.param}” (400${code}):${detail}` : `The server refused the request (400${code}):${detail}`;
    case 404:
      return `Not found (404${code}):${detail}`;
    case 503:
      if (failure.code === 'closed') return 'The server is shutting down (503 closed). Reload the page once it is back.';
      return `The server is busy (503${code}); the next refresh tries again${failure.retryAfterSeconds ? ` (it asks to wait ${failure.retryAfterSeconds} s)` : ''}.`;
    case 504:
      return `The query took longer than the server allows (504${code}).${detail}`;
  }
  if (failure.status >= 500) {
    const id = failure.requestId ? ` (request ${failure.requestId})` : '';
    return `The query failed on the server (${failure.status}${code}).${detail} The server's log has the details${id}.`;
  }
  return `Unexpected answer from the server (${failure.status}${code}).${detail}`;
}
