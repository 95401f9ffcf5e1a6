import { InvalidOptionError } from '../errors';
import { stripComments } from '../engine/clickhouse/query-files';
import { sqlIdentifier } from '../engine/clickhouse/sql-text';
import { flatPathsColumn, flatValuesColumn } from '../util/json-flat-paths';

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
 * `translateBigQuery(..., 'clickhouse', tables)`): an endpoint's source-table template (a SELECT
 * over `source_rows`, e.g. queries/clickhouse/logs.all.tables.sql) over the source's table, its
 * project column named for `project_column`, as a subquery: 18.16 has no WITH ... AS (subquery).
 *
 * @example
 * clickhouseSourceTables(querySql('clickhouse', 'logs.all.tables'), [{ relation: 'edge_logs', table: 'logs.edge_logs', projectColumn: 'project' }]);
 * // { edge_logs: '(SELECT * FROM logs.edge_logs WHERE ({project:Nullable(String)} IS NULL OR project = ...) AND ...)' }
 */
export function clickhouseSourceTables(template: string, sources: readonly SandboxSource[]): Record<string, string> {
  const body = stripComments(template);
  if (!/\bFROM\s+source_rows\b/.test(body)) throw new InvalidOptionError('sourceTables', 'A source-table template reads FROM source_rows.');
  return Object.fromEntries(
    sources.map((s) => {
      if (s.table === null) return [s.relation, EMPTY_SOURCE];
      const sql = body.replace(/\bFROM\s+source_rows\b/g, `FROM ${s.table}`).replace(/\bproject_column\b/g, sqlIdentifier(s.projectColumn, 'sourceDefinitions'));
      return [s.relation, `(${sql.replace(/\s*\n\s*/g, ' ')})`];
    }),
  );
}
