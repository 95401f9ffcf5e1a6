import { statementSql } from './query-files';
import { sqlIdentifier } from './sql-text';
import { flatPathsColumn, flatValuesColumn } from '../../util/json-flat-paths';

/** A source a sandboxed query may read: its relation (the CTE's name) and where ClickHouse keeps it. */
export interface SandboxSource {
  /** The name callers' SQL reads (`edge_logs`). */
  relation: string;
  /** The table's full name (`logs.edge_logs`), or null for a source this installation does not keep (no rows). */
  table: string | null;
  /** Its project column (`project`). */
  projectColumn: string;
}

/** A source this installation does not keep: no rows, with the columns every source has. */
const EMPTY_SOURCE = `(SELECT '' AS id, toInt64(0) AS timestamp, '' AS event_message, '' AS metadata, emptyArrayString() AS ${flatPathsColumn('metadata')}, emptyArrayString() AS ${flatValuesColumn('metadata')} FROM system.one WHERE 0)`;

/**
 * The FROM item of each source for a caller's translated SELECT on ClickHouse (the `tables` of
 * `translateBigQuery(..., 'clickhouse', tables)`): the source's rows of the request's project,
 * window and bounds (queries/clickhouse/sandbox.source.sql), bound with `project`, `after` and
 * `until` as logs.all binds them.
 *
 * @example
 * clickhouseSandboxTables([{ relation: 'edge_logs', table: 'logs.edge_logs', projectColumn: 'project' }]);
 * // { edge_logs: '(SELECT * FROM logs.edge_logs WHERE project = {project:String} AND ...)' }
 */
export function clickhouseSandboxTables(sources: readonly SandboxSource[]): Record<string, string> {
  return Object.fromEntries(sources.map((s) => {
    if (s.table === null) return [s.relation, EMPTY_SOURCE];
    const sql = statementSql('sandbox.source', 'source_rows', s.table).replace(/\bproject_column\b/, sqlIdentifier(s.projectColumn));
    return [s.relation, `(${sql.replace(/\s*\n\s*/g, ' ')})`];
  }));
}
