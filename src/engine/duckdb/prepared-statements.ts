import type { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';

/**
 * Prepared statements kept per connection, least recently used dropped first: the endpoints' own
 * (a dashboard asks the same few questions over and over) in one set, callers' SELECTs (Studio's
 * lists and charts repeat the same text with other bounds) in another, so callers' many texts never
 * push the endpoints' out (docs/performance.md, "Prepared statements").
 */
export const STATEMENTS_PER_CONNECTION = 16;

/**
 * Prepared statements kept per connection and full SQL text. The text spells out every relation
 * it reads (files, byte-range copies, the memory segments held, the Parquet schema): another read
 * is another text, so a kept statement only ever runs over what it was prepared for, with new
 * values bound. Every statement is destroyed when it is dropped or the engine closes (`destroyAll`,
 * before the connections and the instance close).
 *
 * @example
 * const statements = new PreparedStatements(STATEMENTS_PER_CONNECTION);
 * const prepared = await statements.statement(connection, fullQuerySql(statement, files));
 */
export class PreparedStatements {
  private readonly statements = new Map<DuckDBConnection, Map<string, DuckDBPreparedStatement>>();

  constructor(private readonly perConnection: number) {}

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
    // A text DuckDB refuses is not kept: it throws here, and is prepared (and refused) again next time.
    const prepared = await connection.prepare(sql);
    statements.set(sql, prepared);
    if (statements.size > this.perConnection) {
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
