import { EngineError } from '../errors';
import { codeOnly } from '../sql/sql-scan';

/**
 * A ClickHouse statement for every project (`singleProject`: the project parameter is NULL):
 * each test of the project, `<column> = {<param>:String}` or a pattern search
 * `match(<column>, <expression of {<param>:String}>)` (usage.api-counts), is replaced by a true
 * condition. ClickHouse statements test the project in those forms (docs/clickhouse.md,
 * "Single project"), which keeps the sorting key usable when a project is given (18.16 gives up
 * on `p IS NULL OR project = p`). Any other use of the parameter is the statement's mistake,
 * said plainly.
 *
 * @example
 * everyProject('SELECT * FROM t WHERE project = {project:String} AND x = 1', 'project');
 * // 'SELECT * FROM t WHERE 1 = 1 AND x = 1'
 */
export function everyProject(sql: string, param: string): string {
  const column = '(?:`[^`]+`|"[^"]+"|[A-Za-z_][A-Za-z0-9_.]*)';
  const placeholder = `{${param}:String}`;
  const out = withoutCalls(sql.replace(new RegExp(`${column}\\s*=\\s*\\{${param}:String\\}`, 'g'), '1 = 1'), 'match', placeholder);
  if (new RegExp(`\\{${param}:`).test(out)) {
    throw new EngineError('query_failed', `A statement uses {${param}} other than as <column> = {${param}:String} or inside match(); with singleProject the engine cannot drop it.`);
  }
  return out;
}

/**
 * `sql` with each call of `name` whose arguments hold `text` replaced by `1 = 1`. Calls and their
 * parentheses are found in the code alone (codeOnly: text, quoted names and comments blanked), so
 * a parenthesis inside a string or a comment counts for nothing.
 */
function withoutCalls(sql: string, name: string, text: string): string {
  const code = codeOnly(sql);
  let out = '';
  let from = 0;
  for (const call of code.matchAll(new RegExp(`\\b${name}\\s*\\(`, 'gi'))) {
    if (call.index < from) continue;
    const end = closingParenthesis(code, call.index + call[0].length);
    if (end < 0 || !sql.slice(call.index, end).includes(text)) continue;
    out += `${sql.slice(from, call.index)}1 = 1`;
    from = end + 1;
  }
  return out + sql.slice(from);
}

/** Index of the `)` closing the call whose arguments start at `start` in code, or -1. */
function closingParenthesis(code: string, start: number): number {
  let depth = 1;
  for (let i = start; i < code.length; i++) {
    if (code[i] === '(') depth++;
    else if (code[i] === ')' && --depth === 0) return i;
  }
  return -1;
}
