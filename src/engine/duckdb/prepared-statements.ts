import type { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';

/** Prepared statements kept per connection (least recently used dropped first). */
const STATEMENTS_PER_CONNECTION = 16;

/**
 * Prepared statements kept per connection and SQL text, while the file list (and so the SQL)
 * stays the same: a dashboard asks the same few questions over and over.
 *
 * @example
 * const prepared = await statements.statement(connection, fullQuerySql(sql, files));
 */
export class PreparedStatements {
  private readonly statements = new Map<DuckDBConnection, Map<string, DuckDBPreparedStatement>>();

  /** A prepared statement of this SQL on this connection (prepared now, or kept from before). */
  async statement(connection: DuckDBConnection, sql: string): Promise<DuckDBPreparedStatement> {
    let statements = this.statements.get(connection);
    if (!statements) this.statements.set(connection, (statements = new Map()));
    const known = statements.get(sql);
    if (known) {
      statements.delete(sql);
      statements.set(sql, known);
      return known;
    }
    const prepared = await connection.prepare(sql);
    statements.set(sql, prepared);
    if (statements.size > STATEMENTS_PER_CONNECTION) {
      const [oldestSql, oldest] = statements.entries().next().value!;
      statements.delete(oldestSql);
      oldest.destroySync();
    }
    return prepared;
  }

  /** Destroys every kept statement (before the connections close). */
  destroyAll(): void {
    for (const statements of this.statements.values()) for (const prepared of statements.values()) prepared.destroySync();
    this.statements.clear();
  }
}
