import { ANY_ID } from './reference-rows';
import type { Expected, WireRow } from './reference';

/**
 * Whether an answer of `logs.all` is the expected one (reference.ts `Expected`): null when it is,
 * else what differs, in words. Rows are compared as JSON values (key order aside). Tied rows (one
 * group) may come in any order; where the limit cuts a group, any of its rows may fill the rest;
 * an expected id of `ANY_ID` matches any id the server made (a non-empty string).
 *
 * @example
 * const problem = answerProblem(expected, response.status, await response.json());
 */
export function answerProblem(expected: Expected, status: number, body: unknown): string | null {
  if (expected.status === 400) {
    if (status !== 400) return `status ${status}, expected 400 (${JSON.stringify(body).slice(0, 300)})`;
    const message = (body as { error?: { message?: unknown } })?.error?.message;
    if (typeof message !== 'string') return `no error message in ${JSON.stringify(body)}`;
    const missing = expected.mentions.filter((name) => !message.includes(name));
    return missing.length ? `the message does not name ${missing.join(', ')}: ${message}` : null;
  }
  if (status !== 200) return `status ${status}, expected 200: ${JSON.stringify(body).slice(0, 500)}`;
  const rows = (body as { result?: unknown })?.result;
  if (!Array.isArray(rows)) return `no result array in ${JSON.stringify(body).slice(0, 300)}`;
  return rowsProblem(expected, rows as WireRow[]);
}

/** `answerProblem` for the rows alone. */
export function rowsProblem(expected: Extract<Expected, { status: 200 }>, rows: readonly WireRow[]): string | null {
  const total = expected.groups.reduce((n, g) => n + g.length, 0);
  const want = Math.min(total, expected.limit);
  if (rows.length !== want)
    return `${rows.length} rows, expected ${want}${rows.length ? `; first: ${JSON.stringify(rows[0])}` : ''}${want ? `; expected first: ${JSON.stringify(expected.groups[0]![0])}` : ''}`;
  const anyId = expected.groups.some((g) => g.some((r) => r.id === ANY_ID));
  if (anyId) {
    // Each row is its own event here: the ids the server made are distinct.
    const ids = rows.map((r) => r.id);
    if (new Set(ids).size !== ids.length) return `ids repeat: ${JSON.stringify(ids)}`;
  }
  let at = 0;
  for (const group of expected.groups) {
    const take = Math.min(group.length, want - at);
    if (take === 0) break;
    const segment = rows.slice(at, at + take).map((row) => canonical(row, anyId));
    const pool = new Map<string, number>();
    for (const row of group) pool.set(canonical(row, false), (pool.get(canonical(row, false)) ?? 0) + 1);
    for (const [i, text] of segment.entries()) {
      const left = pool.get(text) ?? 0;
      if (left === 0) {
        const expectedRows = group
          .slice(0, 3)
          .map((r) => canonical(r, false))
          .join('\n  ');
        return `row ${at + i} is ${text}; expected ${take === group.length ? '' : `${take} of `}these ${group.length} (first 3):\n  ${expectedRows}`;
      }
      pool.set(text, left - 1);
    }
    at += take;
  }
  return null;
}

/** A row as JSON with sorted keys; with `anyId`, an id the server made stands as `ANY_ID`. */
function canonical(row: WireRow, anyId: boolean): string {
  const copy: WireRow = { ...row };
  if (anyId && typeof copy.id === 'string' && copy.id !== '' && copy.id !== ANY_ID) copy.id = ANY_ID;
  return JSON.stringify(sorted(copy));
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sorted((value as Record<string, unknown>)[k])]),
  );
}
