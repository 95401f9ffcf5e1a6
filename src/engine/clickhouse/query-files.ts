import { querySql } from '../../sql/query-files';
import { EngineError } from '../../errors';

/**
 * The SQL of a statement of ours that is not an endpoint (e.g. `wal.shipped-offsets`) as sent:
 * comments removed and its placeholder relation (`FROM <relation>`) replaced by `qualifiedTable`.
 */
export function statementSql(file: string, relation: string, qualifiedTable: string): string {
  const sql = querySql('clickhouse', file);
  const from = new RegExp(`\\bFROM\\s+${relation}\\b`, 'g');
  const stripped = stripComments(sql);
  if (!from.test(stripped)) throw new EngineError('query_failed', `queries/clickhouse/${file}.sql does not read FROM ${relation}.`);
  return stripped.replace(from, `FROM ${qualifiedTable}`);
}

/** Removes `--` comments (outside quoted text) and blank lines. */
export function stripComments(sql: string): string {
  const lines: string[] = [];
  for (const line of sql.split('\n')) {
    let quoted = false;
    let end = line.length;
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (c === '\\' && quoted) i++;
      else if (c === "'") quoted = !quoted;
      else if (!quoted && c === '-' && line[i + 1] === '-') {
        end = i;
        break;
      }
    }
    const code = line.slice(0, end).trimEnd();
    if (code.trim()) lines.push(code);
  }
  return lines.join('\n');
}
