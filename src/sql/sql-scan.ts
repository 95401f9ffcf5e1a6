/** The SQL dialects engines speak: DuckDB's (`$name` parameters) and ClickHouse's (`{name:Type}`). */
export type SqlDialect = 'duckdb' | 'clickhouse';

/**
 * The SQL text outside string literals, quoted identifiers and comments, with those replaced by
 * spaces (same length): what parameter and function scans look at.
 */
export function codeOnly(sql: string): string {
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (c === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      const stop = end === -1 ? sql.length : end;
      out += ' '.repeat(stop - i);
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      const stop = end === -1 ? sql.length : end + 2;
      out += ' '.repeat(stop - i);
      i = stop;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < sql.length) {
        if (sql[j] === '\\' && c !== '"') j += 2;
        else if (sql[j] === c && sql[j + 1] === c) j += 2;
        else if (sql[j] === c) break;
        else j++;
      }
      const stop = Math.min(sql.length, j + 1);
      out += ' '.repeat(stop - i);
      i = stop;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/**
 * The named parameters a statement uses: `$name` in DuckDB SQL, `{name:Type}` in ClickHouse SQL
 * (each name once, in order of first use).
 */
export function sqlParamNames(sql: string, dialect: SqlDialect): string[] {
  const code = dialect === 'duckdb' ? codeOnly(sql) : codeOnly(sql.replace(/\{([A-Za-z_]\w*)\s*:[^}]*\}/g, ' $$$1 '));
  const names = new Set<string>();
  for (const [, name] of code.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)) names.add(name!);
  return [...names];
}

/** Functions that read the wall clock: a definition's SQL takes `$now` instead, so the injected clock holds. */
const CLOCK_CALLS = /\b(now|get_current_timestamp|get_current_time|transaction_timestamp|today|yesterday|current_timestamp|current_date|current_time|localtimestamp|localtime)\s*\(/i;
/** The SQL keywords that read the clock without parentheses. */
const CLOCK_KEYWORDS = /(?<![\w.$])(current_timestamp|current_date|current_time|localtimestamp|localtime)(?![\w(])/i;

/** The first wall-clock function the SQL calls, or null. */
export function clockFunctionIn(sql: string): string | null {
  const code = codeOnly(sql);
  const match = CLOCK_CALLS.exec(code) ?? CLOCK_KEYWORDS.exec(code);
  return match ? match[1]!.toLowerCase() : null;
}
