import { codeOnly } from './sql-scan';

// Which columns of a relation a statement can read: the ones it names. The engine's SQL gives a
// statement its source's relation with only those columns (statement-sql.ts), because DuckDB's
// planner costs grow with the columns a Parquet scan projects before it drops the unused ones: its
// join-order pass reads each projected column's statistics from every row group (a day file of
// the gateway log: 175 groups, 27 columns), about 1.3 ms of a logs.all page's 4 ms statement
// (docs/performance.md, "The seed's older pages and hourly usage"). This reads the text of the
// library's and definitions' own statements and source-table templates; a caller's SELECT is read
// from the parse tree the sandbox checked instead (src/sandbox/table-reads.ts).

/**
 * A `*` that selects columns (`SELECT *`, `t.*`, `, *`, and in parentheses: `SELECT (*)` gives
 * every column too), not a product or `count(*)` (a function's parenthesis follows its name).
 */
const WILDCARD = /(?:\bSELECT|\bDISTINCT|\bALL|,|\.)[\s(]*\*/i;
/**
 * What reads columns it does not name: `COLUMNS(...)` expressions, natural joins, PIVOT and
 * UNPIVOT (their other columns are implicit), `DISTINCT ON (...)` (its star follows a parenthesis,
 * which a product's can too), a column by its position (`#2`: narrower, the relation would give
 * another column), and a query that starts with FROM (DuckDB's `FROM edge_logs` alone selects
 * every column).
 */
const UNNAMED = /\bCOLUMNS\s*\(|\bNATURAL\b|\b(?:UN)?PIVOT\b|\bDISTINCT\s+ON\b|#\s*\d|(?:^|[(;]|\bUNION(?:\s+ALL)?|\bEXCEPT(?:\s+ALL)?|\bINTERSECT(?:\s+ALL)?)\s*FROM\b/i;
/** Words after a table in FROM that are not its alias. */
const NOT_ALIAS = new Set([
  'where',
  'join',
  'left',
  'right',
  'inner',
  'outer',
  'full',
  'cross',
  'on',
  'using',
  'group',
  'order',
  'limit',
  'offset',
  'union',
  'except',
  'intersect',
  'having',
  'window',
  'qualify',
  'as',
  'semi',
  'anti',
  'asof',
  'positional',
  'lateral',
  'tablesample',
]);

/**
 * The columns among `columns` that `sql` names, by name (bare, case-insensitively, or as a quoted
 * identifier), or null when it may read a column of `relation` without naming it: a `*` that
 * selects columns, `COLUMNS(...)`, a natural join, PIVOT or UNPIVOT, a query that starts with
 * FROM, column aliases given to the relation (`FROM edge_logs e(a)`), or the relation (or an
 * alias of it) used as a value (`SELECT edge_logs FROM edge_logs` gives every column as a
 * struct). A name found anywhere
 * counts (a parameter `$name` does not): an extra column costs a little planning, a missing one
 * would fail the statement, so the rule only ever keeps more.
 *
 * @example
 * columnsNamed('SELECT id FROM edge_logs WHERE project = $project', 'edge_logs', ['id', 'project', 'metadata']); // Set { 'id', 'project' }
 * columnsNamed('SELECT * FROM edge_logs', 'edge_logs', ['id']); // null
 */
export function columnsNamed(sql: string, relation: string, columns: readonly string[]): Set<string> | null {
  const code = codeOnly(quotedAsWords(sql));
  if (WILDCARD.test(code) || UNNAMED.test(code) || readsAsValue(code, relation) || renamesByPosition(code, relation)) return null;
  const quoted = new Set(quotedIdentifiers(sql).map((q) => q.toLowerCase()));
  const named = new Set<string>();
  for (const column of columns) {
    const bare = /^[A-Za-z_][A-Za-z0-9_]*$/.test(column) && new RegExp(`(?<![\\w$])${column}(?!\\w)`, 'i').test(code);
    if (bare || quoted.has(column.toLowerCase())) named.add(column);
  }
  return named;
}

/**
 * Whether the relation is given column aliases (`FROM edge_logs e(a, b)`): they rename its columns
 * by position, so a relation cut to the named columns would give `a` another column's values.
 */
function renamesByPosition(code: string, relation: string): boolean {
  const aliased = code.matchAll(new RegExp(`\\b(?:FROM|JOIN)\\s+${relation}(?:\\s+AS)?\\s+([A-Za-z_][A-Za-z0-9_]*)\\s*\\(`, 'gi'));
  // `FROM edge_logs WHERE (...)` is a condition, not an alias's list.
  return [...aliased].some((m) => !NOT_ALIAS.has(m[1]!.toLowerCase()));
}

/**
 * Whether the relation, or an alias given to it in FROM or JOIN, appears other than as a table
 * read (after FROM or JOIN), a CTE defined (`name AS (`) or a qualifier (`name.column`).
 */
function readsAsValue(code: string, relation: string): boolean {
  const names = new Set([relation.toLowerCase()]);
  for (const m of code.matchAll(new RegExp(`\\b(?:FROM|JOIN)\\s+${relation}(?:\\s+AS)?\\s+([A-Za-z_][A-Za-z0-9_]*)`, 'gi'))) {
    if (!NOT_ALIAS.has(m[1]!.toLowerCase())) names.add(m[1]!.toLowerCase());
  }
  for (const name of names) {
    for (const m of code.matchAll(new RegExp(`(?<![\\w$.])${name}(?!\\w)`, 'gi'))) {
      const before = code.slice(0, m.index).trimEnd();
      const after = code.slice(m.index + m[0].length);
      if (/\b(?:FROM|JOIN)$/i.test(before) || /^\s*\./.test(after) || /^\s+AS\s*\(/i.test(after)) continue;
      // A name given (`(SELECT ...) AS t`, `count(*) t`): another range's or an output's, not this one read.
      if (/(?:\bAS|\))$/i.test(before)) continue;
      // The alias where it is given: `FROM edge_logs e`, `FROM edge_logs AS e`.
      if (name !== relation.toLowerCase() && new RegExp(`\\b(?:FROM|JOIN)\\s+${relation}(?:\\s+AS)?$`, 'i').test(before)) continue;
      return true;
    }
  }
  return false;
}

/** Words the rules above read as keywords: a quoted identifier spelled so is not written as one. */
const KEYWORDS = new Set([...NOT_ALIAS, 'select', 'distinct', 'all', 'from', 'columns', 'natural', 'pivot', 'unpivot']);

/**
 * The SQL with each quoted identifier written as a bare word naming the same thing, so that the
 * rules above see a quoted relation or alias as they see a bare one (`SELECT "e" FROM edge_logs
 * e` reads the alias as a value: every column). A quoted identifier is the bare word it spells
 * where that is a word and not a keyword above (identifiers match in any case, quoted or not),
 * else a word of its own per spelling (`"my e"`, `"join"`), the same wherever it is written.
 */
function quotedAsWords(sql: string): string {
  const words = new Map<string, string>();
  let out = '';
  let last = 0;
  for (const { start, end, name } of quotedIdentifierSpans(sql)) {
    const key = name.toLowerCase();
    let word = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !KEYWORDS.has(key) ? name : words.get(key);
    if (word === undefined) words.set(key, (word = `le_quoted_${words.size}`));
    out += `${sql.slice(last, start)} ${word} `;
    last = end;
  }
  return out + sql.slice(last);
}

/** The names written as quoted identifiers (`"text:metadata.request.path"`), outside comments and string literals. */
function quotedIdentifiers(sql: string): string[] {
  return quotedIdentifierSpans(sql).map((q) => q.name);
}

/** Each quoted identifier of the SQL, outside comments and string literals: its name and where it is written. */
function quotedIdentifierSpans(sql: string): Array<{ start: number; end: number; name: string }> {
  const out: Array<{ start: number; end: number; name: string }> = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      let text = '';
      while (j < sql.length) {
        if (sql[j] === '\\' && c === "'") (text += sql.slice(j, j + 2)), (j += 2);
        else if (sql[j] === c && sql[j + 1] === c) (text += c), (j += 2);
        else if (sql[j] === c) break;
        else text += sql[j++];
      }
      if (c === '"') out.push({ start: i, end: Math.min(sql.length, j + 1), name: text });
      i = j + 1;
    } else i++;
  }
  return out;
}
