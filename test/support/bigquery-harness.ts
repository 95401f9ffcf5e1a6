import { DuckDBInstance, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import type { BigQuerySchema } from '../../src/bigquery/schema';
import { translateBigQuery } from '../../src/bigquery/translate-bigquery';
import { checkBigQueryText } from '../../src/query/sandboxed-check';
import { callerSqlError } from '../../src/engine/duckdb/caller-errors';
import { composeSandboxedSql } from '../../src/sandbox/compose-sandboxed-sql';

/** One event of a table, as the endpoint's CTE gives it (metadata any JSON value, or missing). */
export interface TestEvent {
  id: string;
  timestamp: string;
  event_message: string;
  metadata?: unknown;
}

export const TABLES = ['edge_logs', 'postgres_logs', 'auth_logs', 'function_logs', 'function_edge_logs', 'realtime_logs', 'storage_logs', 'postgrest_logs', 'pgbouncer_logs', 'supavisor_logs'];

/** The tables' schema: Logflare's four columns each, and the fields Studio's bare names need. */
export const SCHEMA: BigQuerySchema = {
  tables: Object.fromEntries(
    TABLES.map((t) => [
      t,
      {
        columns: { id: 'text', timestamp: 'timestamp', event_message: 'text', metadata: 'json' },
        fields: {
          metadata:
            t === 'edge_logs'
              ? [
                  'request.path',
                  'request.method',
                  'request.search',
                  'request.headers.x_real_ip',
                  'request.cf.country',
                  'response.status_code',
                  'response.origin_time',
                  'response.headers.cf_cache_status',
                ]
              : t === 'postgres_logs'
                ? ['parsed.error_severity', 'parsed.user_name', 'parsed.application_name']
                : ['level', 'status', 'path', 'msg'],
        },
      },
    ]),
  ),
};

/**
 * A DuckDB with the endpoint's CTEs over test events: translates, checks with the sandbox's own
 * rules, and runs callers' BigQuery SQL as an endpoint would (inside the row cap's wrapper).
 */
export class BigQueryHarness {
  private instance!: DuckDBInstance;
  private connection!: DuckDBConnection;
  private withClause = '';

  async open(events: Partial<Record<string, TestEvent[]>>): Promise<void> {
    this.instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    this.connection = await this.instance.connect();
    const ctes = TABLES.map((t) => `${t} AS (${eventsSql(events[t] ?? [])})`);
    this.withClause = `WITH ${ctes.join(', ')} SELECT 1`;
  }

  close(): void {
    this.connection?.closeSync();
    this.instance?.closeSync();
  }

  serialize = async (sql: string): Promise<string> => String((await this.connection.runAndReadAll('SELECT json_serialize_sql($sql::VARCHAR)', { sql }, { sql: VARCHAR })).getRows()[0]![0]);

  /** The DuckDB text of a translation (not run). */
  async translate(sql: string): Promise<string> {
    return (await translateBigQuery(sql, SCHEMA, 'duckdb')).sql;
  }

  /** Rows of a caller's BigQuery SQL as objects (timestamps as ISO text, JSON parsed, numbers as numbers). */
  async rows(sql: string, maxRows = 1000): Promise<Array<Record<string, unknown>>> {
    const checked = await checkBigQueryText(sql, SCHEMA, 'duckdb', { tables: TABLES, maxRows }, { serialize: this.serialize });
    const full = composeSandboxedSql(this.withClause, checked.sql, maxRows);
    // A failure of the query itself is the caller's 400, as the engine reports it.
    const reader = await this.connection.runAndReadAll(full).catch((error: unknown) => {
      throw callerSqlError(error, []) ?? error;
    });
    const names = reader.columnNames();
    const kinds = checked.columns.map((c) => c.kind);
    return reader.getRowsJson().map((row) => Object.fromEntries(row.map((value, i) => [names[i]!, shape(value, kinds[i])])));
  }
}

function shape(value: unknown, kind: string | undefined): unknown {
  if (value === null) return null;
  if (kind === 'json') return JSON.parse(String(value));
  if (kind === 'integer' || kind === 'float') return Number(value);
  if (kind === 'timestamp') return `${String(value).replace(' ', 'T')}Z`;
  return value;
}

const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;

function eventsSql(events: readonly TestEvent[]): string {
  const empty = 'SELECT CAST(NULL AS VARCHAR) AS id, CAST(NULL AS TIMESTAMP) AS timestamp, CAST(NULL AS VARCHAR) AS event_message, CAST(NULL AS JSON) AS metadata LIMIT 0';
  if (events.length === 0) return empty;
  const rows = events.map(
    (e) =>
      `(${lit(e.id)}, CAST(${lit(e.timestamp.replace('Z', ''))} AS TIMESTAMP), ${lit(e.event_message)}, ${e.metadata === undefined ? 'NULL' : `CAST(${lit(JSON.stringify(e.metadata))} AS JSON)`})`,
  );
  return `SELECT * FROM (VALUES ${rows.join(', ')}) AS v(id, timestamp, event_message, metadata)`;
}
