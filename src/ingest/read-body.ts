import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as zlib from 'node:zlib';
import { InvalidBodyError, LogEndpointsError, PayloadTooLargeError } from '../errors';
import { NestingScan } from './json-nesting';
import { printable } from '../util/printable';

/** Logflare's limit: 12 MiB of body after decompression. */
export const MAX_BODY_BYTES = 12 * 1024 * 1024;

export interface ReadBodyOptions {
  /** `Content-Encoding`: none / `identity`, `gzip` (`x-gzip`) or `deflate`; anything else is 415. */
  contentEncoding: string | null;
  /** Most bytes after decompression (and before it); past it `PayloadTooLargeError` (413). */
  maxBytes: number;
  /**
   * Called with the size of each decoded chunk before it is kept, and the values it adds to the
   * JSON (its commas outside strings, with `maxNesting`), so a caller can bound the memory of all
   * requests together, parses included (it throws to refuse).
   */
  onBytes?: (bytes: number, values: number) => void;
  /**
   * Refuse (`InvalidBodyError`) a JSON body nested deeper than this, as soon as the bracket past
   * it arrives: the rest is never inflated, and the parser never sees it.
   */
  maxNesting?: number;
}

/**
 * Reads a request body to its end, decompressing as it goes, and stops at the limit: the raw
 * stream is read no further than `maxBytes`, and a gzip body is inflated only up to `maxBytes`
 * of output, so a small gzip bomb never expands in memory.
 */
export async function readBody(chunks: AsyncIterable<Uint8Array> | null, options: ReadBodyOptions): Promise<Buffer> {
  const decoder = decoderOf(options.contentEncoding);
  const nesting = options.maxNesting === undefined ? null : new NestingScan(options.maxNesting);
  const parts: Buffer[] = [];
  let size = 0;
  // Why reading stopped: the pipeline reports its own AbortError for the streams it tears down.
  let refusal: unknown = null;
  const keep = (chunk: Uint8Array) => {
    size += chunk.length;
    if (size > options.maxBytes) throw (refusal = new PayloadTooLargeError(options.maxBytes));
    const before = nesting?.values ?? 0;
    const deep = nesting?.feed(chunk) ?? -1;
    if (deep >= 0) {
      throw (refusal = new InvalidBodyError(`The body is nested more than ${options.maxNesting} levels deep (at byte ${deep}); events may nest at most that deep.`));
    }
    try {
      options.onBytes?.(chunk.length, (nesting?.values ?? 0) - before);
    } catch (error) {
      throw (refusal = error);
    }
    parts.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
  };
  if (chunks === null) return Buffer.alloc(0);
  if (decoder === null) {
    for await (const chunk of limited(chunks, options.maxBytes)) keep(chunk);
    return Buffer.concat(parts, size);
  }
  try {
    await pipeline(Readable.from(limited(chunks, options.maxBytes), { objectMode: false }), decoder, async (inflated: AsyncIterable<Buffer>) => {
      for await (const chunk of inflated) keep(chunk);
    });
  } catch (error) {
    if (refusal !== null) throw refusal;
    if (error instanceof LogEndpointsError) throw error;
    if (isZlibError(error)) {
      throw new InvalidBodyError(`The body is not valid ${options.contentEncoding?.trim().toLowerCase()} data (${(error as Error).message}).`, { cause: error });
    }
    throw error;
  }
  return Buffer.concat(parts, size);
}

/** The raw chunks, refusing once more than `maxBytes` arrived (compressed data is never larger in practice). */
async function* limited(chunks: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<Uint8Array> {
  let size = 0;
  for await (const chunk of chunks) {
    size += chunk.length;
    if (size > maxBytes) throw new PayloadTooLargeError(maxBytes);
    yield chunk;
  }
}

function decoderOf(contentEncoding: string | null): zlib.Gunzip | zlib.Inflate | null {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return null;
  if (codings.length === 1 && (codings[0] === 'gzip' || codings[0] === 'x-gzip')) return zlib.createGunzip();
  if (codings.length === 1 && codings[0] === 'deflate') return zlib.createInflate();
  throw new LogEndpointsError('unsupported_media_type', 415, `Content-Encoding "${printable(contentEncoding ?? '', 40)}" is not supported; send gzip, deflate or an uncompressed body.`);
}

function isZlibError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}
