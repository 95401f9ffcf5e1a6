/**
 * A request as the handler core reads it: what every server can give without building fetch
 * objects (undici's Request/Response cost more than the whole answer of a cache hit).
 */
export interface PlainRequest {
  method: string;
  /** Absolute URL or origin form (`/path?query`). */
  url: string;
  /** A header's value, null when absent (names are case-insensitive). */
  header(name: string): string | null;
  /**
   * The request body as it arrives (still content-encoded), read at most once; null or absent when
   * there is none. The reader (`readBody` of the ingest routes) enforces the size limit while
   * streaming, so an oversized body is never held whole.
   */
  body?: () => AsyncIterable<Uint8Array> | null;
}

/** An answer as the handler core produces it; each adapter writes it out its own way. */
export interface PlainResponse {
  status: number;
  /** Header names in their canonical case; one value each. */
  headers: Record<string, string>;
  /** Null for HEAD answers and preflights; Content-Length is set either way. */
  body: Uint8Array | null;
}

/** A fetch `Request` as a `PlainRequest`. */
export function fromFetchRequest(request: Request): PlainRequest {
  return { method: request.method, url: request.url, header: (name) => request.headers.get(name), body: () => request.body };
}

/** A `PlainResponse` as a fetch `Response`. */
export function toFetchResponse(response: PlainResponse): Response {
  return new Response(response.body, { status: response.status, headers: response.headers });
}
