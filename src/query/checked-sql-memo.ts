import type { CheckedSql } from '../sandbox/validate-caller-sql';

/**
 * Callers' SQL already checked, by endpoint and text: Studio sends the same few texts again and
 * again (each list, count and single log), and translating and checking one cost 4-31 ms a call,
 * more than running it (docs/performance.md, "Supabase Studio's queries"). What a check answers
 * depends only on the text, the endpoint and the source set it is checked for (one memo per
 * set: accept-caller-sql.ts), so an instance keeps the last `limit` texts it accepted, least recently used out first; a refusal is checked again
 * on every call (it is cheap, and never kept).
 *
 * @example
 * const memo = new CheckedSqlMemo();
 * const checked = await memo.get('logs.all', sql, () => check.check(statement, sql, 1000));
 */
export class CheckedSqlMemo {
  readonly #entries = new Map<string, Promise<CheckedSql>>();

  /** `limit` texts of at most 64 KiB each (the longest a caller's SQL may be): a few MiB at most. */
  constructor(private readonly limit = 256) {}

  /** The checked SQL of `sql` sent to `endpoint`: remembered, or `check`ed now. */
  get(endpoint: string, sql: string, check: () => Promise<CheckedSql>): Promise<CheckedSql> {
    const key = `${endpoint}\0${sql}`;
    const known = this.#entries.get(key);
    if (known) {
      // Most recently used last: the oldest is the first of the map.
      this.#entries.delete(key);
      this.#entries.set(key, known);
      return known;
    }
    const checked = check();
    this.#entries.set(key, checked);
    checked.then(
      // Accepted: kept, and the least recently used go past the limit.
      () => {
        while (this.#entries.size > this.limit) this.#entries.delete(this.#entries.keys().next().value!);
      },
      () => {
        if (this.#entries.get(key) === checked) this.#entries.delete(key);
      },
    );
    return checked;
  }

  /** How many texts are remembered. */
  get size(): number {
    return this.#entries.size;
  }
}
