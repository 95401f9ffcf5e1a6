import { InvalidSqlError } from '../errors';
import { MAX_CALLER_SQL_LENGTH } from '../sandbox/validate-caller-sql';
import { withoutPaths } from '../sandbox/without-paths';

/** A node of sqlparser-rs's syntax tree, as its JSON serialization gives it. */
export type Node = Record<string, unknown>;

type SqlParser = typeof import('@guanmingchiu/sqlparser-ts');
let loaded: Promise<SqlParser> | null = null;

/**
 * The parser Logflare itself uses (sqlparser-rs, its BigQuery dialect), compiled to WebAssembly:
 * loaded on the first translation only, so nothing else pays for it.
 */
function parser(): Promise<SqlParser> {
  loaded ??= import('@guanmingchiu/sqlparser-ts').then(async (module) => {
    await module.init();
    return module;
  });
  loaded.catch(() => (loaded = null));
  return loaded;
}

/**
 * Parses a caller's BigQuery SQL into sqlparser-rs's tree of one query: too long, unparsable,
 * several statements or another kind of statement are refused as the sandbox refuses them.
 *
 * @example
 * const query = await parseBigQuery('select id from edge_logs');
 */
export async function parseBigQuery(text: string): Promise<Node> {
  if (typeof text !== 'string' || text.trim() === '') throw new InvalidSqlError('syntax', 'The SQL is empty: send one SELECT statement.');
  if (text.length > MAX_CALLER_SQL_LENGTH) throw new InvalidSqlError('too_long', `The SQL is longer than ${MAX_CALLER_SQL_LENGTH} characters.`);
  const { Parser } = await parser();
  let statements: unknown;
  try {
    statements = JSON.parse(Parser.parseToJson(text, 'bigquery'));
  } catch (error) {
    throw new InvalidSqlError('syntax', `The SQL does not parse: ${parserMessage(error)}`, { cause: error });
  }
  if (!Array.isArray(statements) || statements.length !== 1) throw new InvalidSqlError('one_statement', 'Send exactly one SELECT statement.');
  const statement = statements[0] as Node;
  if (typeof statement !== 'object' || statement === null || !('Query' in statement)) {
    throw new InvalidSqlError('select_only', 'Only a SELECT statement may be sent (no SET, CREATE, INSERT, DECLARE, EXECUTE IMMEDIATE, ...).');
  }
  return statement.Query as Node;
}

/** The parser's message, one line, without paths. */
function parserMessage(error: unknown): string {
  const message = String((error as Error)?.message ?? error).replace(/^(sql parser error|ParserError):\s*/i, '');
  if (/recursion limit|stack|call stack/i.test(message)) return 'it is nested too deeply.';
  const line = withoutPaths(message.split('\n')[0]!.trim());
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
