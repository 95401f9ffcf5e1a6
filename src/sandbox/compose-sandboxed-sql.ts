import { InternalError } from '../util/internal-error';
import { InvalidOptionError } from '../errors';
/**
 * How a caller's SELECT runs over an endpoint: the endpoint's SQL is `WITH <ctes> SELECT ...`;
 * its WITH clause stays, with its `$params`, and the caller's query replaces the outer SELECT,
 * wrapped so that the endpoint's max rows caps it (a LIMIT of the caller's can only lower it).
 *
 * The wrapper is the same text the validation parses (`sandboxedSelect`), so what is checked is
 * what runs, bar the endpoint's own WITH clause in front. The caller's text stands on lines of
 * its own: a trailing `--` comment ends at the newline and cannot swallow the wrapper.
 *
 * @example
 * composeSandboxedSql('WITH edge_logs AS (SELECT ...) SELECT * FROM edge_logs', 'select count(*) from edge_logs', 1000);
 * // 'WITH edge_logs AS (SELECT ...)\nSELECT * FROM (\nselect count(*) from edge_logs\n) AS sandboxed LIMIT 1000'
 */
export function composeSandboxedSql(endpointSql: string, callerSql: string, maxRows: number): string {
  // A statement without CTEs (source tables when the caller names no source) gives it none.
  const withClause = /^(\s*--[^\n]*\n)*\s*WITH\s/i.test(endpointSql) ? splitEndpointSql(endpointSql).withClause : '';
  return `${withClause}\n${sandboxedSelect(callerSql, maxRows)}`;
}

/** The caller's query inside the wrapper that caps its rows (also what the validation parses). */
export function sandboxedSelect(callerSql: string, maxRows: number): string {
  // defineEndpoint checks maxRows (1 to 1,000,000); anything else here is a bug.
  if (!Number.isSafeInteger(maxRows) || maxRows < 0) throw new InternalError('invariant', `maxRows must be a non-negative integer, not ${maxRows}`);
  return `SELECT * FROM (\n${callerSql}\n) AS sandboxed LIMIT ${maxRows}`;
}

/** An endpoint's SQL cut after its WITH clause, and the names of its CTEs (lower case). */
export interface EndpointCtes {
  /** `WITH a AS (...), b AS (...)`, comments before it included. */
  withClause: string;
  tables: string[];
}

/**
 * Splits an endpoint's SQL (`WITH a AS (...), b AS (...) SELECT ...`) after its WITH clause.
 * The SQL is the endpoint author's, not a caller's: this only has to find where the CTEs end
 * (parentheses outside strings, quoted names and comments). Throws when the SQL has no WITH
 * clause of plain CTEs.
 *
 * @example
 * splitEndpointSql('WITH a AS (SELECT 1) SELECT * FROM a'); // { withClause: 'WITH a AS (SELECT 1)', tables: ['a'] }
 */
export function splitEndpointSql(sql: string): EndpointCtes {
  // An endpoint's CTEs are lexed once per text: every caller's SELECT over it is composed with them.
  let known = SPLIT.get(sql);
  if (!known) {
    if (SPLIT.size >= 256) SPLIT.clear();
    SPLIT.set(sql, (known = lexEndpointSql(sql)));
  }
  return { withClause: known.withClause, tables: [...known.tables] };
}

/** Endpoints' SQL split, by text (a few statements per instance). */
const SPLIT = new Map<string, EndpointCtes>();

function lexEndpointSql(sql: string): EndpointCtes {
  const lexer = new Lexer(sql);
  if (lexer.word()?.toUpperCase() !== 'WITH') throw new InvalidOptionError('sql', "A sandboxable endpoint's SQL must start with WITH (its CTEs), then its SELECT.");
  const tables: string[] = [];
  let end = 0;
  for (;;) {
    const name = lexer.name();
    if (name === null) throw new InvalidOptionError('sql', 'Expected the name of a CTE after WITH.');
    tables.push(name.toLowerCase());
    // An optional column list, then AS, then [NOT] MATERIALIZED, then the body.
    if (lexer.peek() === '(') lexer.skipParens();
    if (lexer.word()?.toUpperCase() !== 'AS') throw new InvalidOptionError('sql', `Expected AS after the CTE ${name}.`);
    let next = lexer.peek();
    while (next !== '(' && next !== null) {
      const word = lexer.word()?.toUpperCase();
      if (word !== 'NOT' && word !== 'MATERIALIZED') throw new InvalidOptionError('sql', `Expected the body of the CTE ${name} in parentheses.`);
      next = lexer.peek();
    }
    lexer.skipParens();
    end = lexer.position;
    if (lexer.peek() !== ',') break;
    lexer.take();
  }
  return { withClause: sql.slice(0, end), tables };
}

/** Just enough of a SQL lexer to walk over a WITH clause. */
class Lexer {
  position = 0;
  constructor(private readonly text: string) {}

  /** The next significant character (after spaces and comments), not consumed. */
  peek(): string | null {
    this.skipSpace();
    return this.position < this.text.length ? this.text[this.position]! : null;
  }

  take(): string {
    return this.text[this.position++]!;
  }

  /** A bare word, or null (nothing consumed) when the next token is not one. */
  word(): string | null {
    this.skipSpace();
    const m = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(this.text.slice(this.position));
    if (!m) return null;
    this.position += m[0].length;
    return m[0];
  }

  /** A bare or double-quoted name. */
  name(): string | null {
    if (this.peek() !== '"') return this.word();
    const start = ++this.position;
    this.skipQuoted('"');
    return this.text.slice(start, this.position - 1).replaceAll('""', '"');
  }

  /** Skips a parenthesized group, whatever it holds. */
  skipParens(): void {
    if (this.peek() !== '(') throw new InvalidOptionError('sql', 'Expected "(".');
    let depth = 0;
    while (this.position < this.text.length) {
      const c = this.text[this.position]!;
      if (c === '-' && this.text[this.position + 1] === '-') this.skipSpace();
      else if (c === '/' && this.text[this.position + 1] === '*') this.skipSpace();
      else if (c === "'" || c === '"') {
        this.position++;
        this.skipQuoted(c);
      } else if (c === '$' && this.skipDollarQuoted()) {
        // skipped
      } else {
        this.position++;
        if (c === '(') depth++;
        else if (c === ')' && --depth === 0) return;
      }
    }
    throw new InvalidOptionError('sql', "Unbalanced parentheses in the endpoint's SQL.");
  }

  private skipSpace(): void {
    for (;;) {
      const rest = this.text.slice(this.position);
      const m = /^(\s+|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)/.exec(rest);
      if (!m) return;
      this.position += m[0].length;
    }
  }

  /** Past the closing quote (a doubled quote is part of the text). */
  private skipQuoted(quote: string): void {
    for (;;) {
      const end = this.text.indexOf(quote, this.position);
      if (end < 0) throw new InvalidOptionError('sql', "Unterminated quote in the endpoint's SQL.");
      this.position = end + 1;
      if (this.text[this.position] !== quote) return;
      this.position++;
    }
  }

  /** `$tag$...$tag$` strings; false (nothing consumed) when `$` starts a parameter instead. */
  private skipDollarQuoted(): boolean {
    const m = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(this.text.slice(this.position));
    if (!m) return false;
    const end = this.text.indexOf(m[0], this.position + m[0].length);
    if (end < 0) throw new InvalidOptionError('sql', "Unterminated $-quoted string in the endpoint's SQL.");
    this.position = end + m[0].length;
    return true;
  }
}
