/** Digits of a segment number in its file name: sorting names sorts segments. */
const DIGITS = 20;
const NAME = /^(\d{20})\.ndjson$/;

/**
 * The file name of WAL segment `seq`: `00000000000000000042.ndjson`. Zero-padded so that name
 * order is segment order, and `.ndjson` so that any NDJSON reader (DuckDB, `jq`) reads it.
 */
export function segmentFileName(seq: number): string {
  // An invariant, not a caller's mistake: numbers come from the WAL's own count (kept a RangeError for the WAL's tests).
  if (!Number.isSafeInteger(seq) || seq < 1) throw new RangeError(`A segment number is a positive integer, not ${seq}.`);
  return `${String(seq).padStart(DIGITS, '0')}.ndjson`;
}

/** The segment number of a file name, or null when the name is not a segment's. */
export function segmentSeqOf(fileName: string): number | null {
  const m = NAME.exec(fileName);
  if (!m) return null;
  const seq = Number(m[1]);
  return Number.isSafeInteger(seq) && seq >= 1 ? seq : null;
}
