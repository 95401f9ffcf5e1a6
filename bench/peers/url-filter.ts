import { isPlainText, requiredLiteral } from '../../src/sql/required-literal';

/**
 * The URL filter a ClickHouse expert writes per pattern kind: plain text as a substring search
 * (`position`, which skips the regular expression engine altogether), and a pattern with special
 * characters as `match`, its required literal searched first when it has one (as the library's
 * own prefilter does on DuckDB). `value` renders a string as SQL: a bound parameter or a literal.
 *
 * @example
 * expertUrlFilter('abc', quote)        // position(request_url, 'abc') > 0
 * expertUrlFilter('abc(\\.|$)', quote) // position(request_url, 'abc') > 0 AND match(request_url, 'abc(\.|$)')
 */
export function expertUrlFilter(pattern: string, value: (text: string, name: string) => string): string {
  if (isPlainText(pattern)) return `position(request_url, ${value(pattern, 'project')}) > 0`;
  const literal = requiredLiteral(pattern);
  const match = `match(request_url, ${value(pattern, 'project')})`;
  return literal ? `position(request_url, ${value(literal, 'literal')}) > 0 AND ${match}` : match;
}
