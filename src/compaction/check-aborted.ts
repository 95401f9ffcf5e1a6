import { EngineError } from '../errors';

/**
 * Stops a compaction between its steps once its signal is aborted (`CompactOptions.signal`); the
 * one check of it shared by `compactFiles` and `writeRun`.
 *
 * @example
 * checkAborted(options.signal); // throws EngineError 'closed' after abort()
 */
export function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new EngineError('closed', 'compact: aborted; nothing was committed and the inputs are untouched', { cause: signal.reason });
}
