/**
 * An error no caller sees as it is. Either a sentinel the code around it catches and turns into a
 * `LogEndpointsError` (a query that finished past its limit, an aborted request, a parser thread
 * that exited), or one that stands for a system error by its errno `code` (a short write as
 * `ENOSPC`, a file shorter than listed as `ENOENT`), so it takes the way that error takes, or a
 * state the code rules out (`invariant`: a bug of ours, never a caller's input; a generic 500 if it
 * ever reaches HTTP).
 *
 * @example
 * if (bytesWritten !== total) throw new InternalError('ENOSPC', `Short write: ${bytesWritten} of ${total} bytes.`);
 */
export class InternalError extends Error {
  constructor(
    readonly code: InternalCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
  }
}

/** The stable codes of internal errors: errno codes they stand for, or the sentinel's kind. */
export type InternalCode = 'ENOSPC' | 'ENOENT' | 'ECONNRESET' | 'past_limit' | 'aborted' | 'parser_exited' | 'unbound_parameter' | 'not_declared' | 'invariant';
