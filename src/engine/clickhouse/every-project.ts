import { EngineError } from '../../errors';

/**
 * A ClickHouse statement for every project (`singleProject`: the project parameter is NULL):
 * each test of the project, `<column> = {<param>:String}` or a pattern search
 * `match(<column>, concat('...', {<param>:String}, '...'))` (usage.api-counts), is replaced by a
 * true condition. ClickHouse statements test the project in those forms (docs/clickhouse.md,
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
  const placeholder = `\\{${param}:String\\}`;
  const literal = "'(?:[^'\\\\]|\\\\.)*'";
  const out = sql
    .replace(new RegExp(`${column}\\s*=\\s*${placeholder}`, 'g'), '1 = 1')
    .replace(new RegExp(`match\\(\\s*${column}\\s*,\\s*concat\\(\\s*${literal}\\s*,\\s*${placeholder}\\s*,\\s*${literal}\\s*\\)\\s*\\)`, 'g'), '1 = 1');
  if (new RegExp(`\\{${param}:`).test(out)) {
    throw new EngineError('query_failed', `A statement uses {${param}} other than as <column> = {${param}:String}; with singleProject the engine cannot drop it.`);
  }
  return out;
}
