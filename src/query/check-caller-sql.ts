import { InvalidParameterError } from '../errors';
import type { EngineStatement, EngineTarget } from '../engine/engine';
import { bigQuerySchemaOf } from '../bigquery/schema-of-sources';
import type { BigQuerySchema } from '../bigquery/schema';
import { splitEndpointSql } from '../sandbox/compose-sandboxed-sql';
import { sourcesNamedBy } from '../sandbox/source-tables';
import type { CallerDialect, CheckedSql } from '../sandbox/validate-caller-sql';
import type { SourceSet } from '../sources/source-set';
import { callerDialectRefused } from './caller-dialect';
import { clickhouseSourceTables } from './clickhouse-source-tables';
import type { SqlParser } from './sql-parser';
import { checkBigQueryText, checkDuckDbText } from './sandboxed-check';
import { dialectSql } from './dialect-sql';
import { rowsAreEvents } from './first-rows';

/**
 * Checks callers' SELECTs for one instance (docs/sandboxing.md): over a statement's CTEs, or over
 * a table per source when the statement has source tables. A BigQuery SELECT is translated for
 * the target first; its DuckDB text is what the rules check, on the parser's tree, and the
 * target's text is what runs. Nothing here asks the engine: the target says what it runs.
 *
 * The instance's sources come with each text: the set a request began with (its typed fields
 * grow while the instance runs: src/sources/live-source-set.ts), so the text is translated for
 * the relations that request reads.
 *
 * @example
 * const check = new CallerSqlCheck({ dialect: 'duckdb' }, neutralSqlParser, 'bigquery');
 * const { sql, key, columns } = await check.check(statementOf(logsAll), 'select count(*) as n from edge_logs', 1000, BUILT_IN_SOURCE_SET);
 */
export class CallerSqlCheck {
  /** The tables a BigQuery SELECT may read (one per source), per source set, built on first use. */
  readonly #schemas = new WeakMap<SourceSet, BigQuerySchema>();
  /** ClickHouse: source-table template -> each source's FROM item. */
  readonly #clickhouseTables = new Map<string, Record<string, string>>();
  /** Source-table template -> whether its rows are events as they are (`rowsAreEvents`). */
  readonly #eventTemplates = new Map<string, Promise<boolean>>();

  constructor(
    private readonly target: EngineTarget,
    private readonly parser: SqlParser,
    private readonly dialect: CallerDialect = 'duckdb',
  ) {}

  /**
   * The checked SELECT of `sql` over `statement`, capped at `maxRows`, for the instance's `sources`
   * (a ClickHouse target reads its own: the same or more); `InvalidSqlError` when a rule is broken.
   */
  async check(statement: EngineStatement, sql: string, maxRows: number, sources: SourceSet): Promise<CheckedSql> {
    const read = this.target.dialect === 'clickhouse' ? this.target.sources : sources;
    const checked = this.target.dialect === 'clickhouse' ? await this.#checkClickHouse(statement, sql, maxRows, this.target) : await this.#checkDuckDB(statement, sql, maxRows, read);
    if (!statement.sourceTables) return checked;
    // The sources it names (each read costs a listing of its files), found once per text.
    return { ...checked, sources: sourcesNamedBy(checked.sql, read.list).map((s) => s.name) };
  }

  /** The BigQuery schema of a source set, made once per set. */
  #schemaOf(sources: SourceSet): BigQuerySchema {
    let schema = this.#schemas.get(sources);
    if (!schema) this.#schemas.set(sources, (schema = bigQuerySchemaOf(sources.list)));
    return schema;
  }

  async #checkDuckDB(statement: EngineStatement, sql: string, maxRows: number, set: SourceSet): Promise<CheckedSql> {
    const sources = statement.sourceTables ? set.list : null;
    const tables = sources ? sources.map((s) => s.relation) : splitEndpointSql(dialectSql(statement, 'duckdb')).tables;
    let checked: CheckedSql;
    if (this.dialect === 'duckdb') checked = await checkDuckDbText(sql, { tables, maxRows }, this.parser);
    else if (!sources) throw callerDialectRefused(statement.name);
    else {
      const translated = await checkBigQueryText(sql, this.#schemaOf(set), 'duckdb', { tables, maxRows }, this.parser);
      checked = {
        sql: translated.sql,
        key: translated.key,
        columns: translated.columns,
        typedColumns: true,
        ...(translated.firstRows === undefined ? {} : { firstRows: translated.firstRows }),
        ...(translated.newestRows === undefined ? {} : { newestRows: translated.newestRows }),
        ...(translated.arraysFree === undefined ? {} : { arraysFree: translated.arraysFree }),
        ...(translated.hourCounts === undefined ? {} : { hourCounts: translated.hourCounts }),
        ...(translated.reads === undefined ? {} : { reads: translated.reads }),
      };
    }
    // First rows, and newest rows, are rows of part of the events only over source tables that
    // keep events as they are.
    const template = statement.sourceTables?.duckdb;
    // So are the hour counts' rows counts of the events, over a template that filters them by
    // project and time alone (what the engine narrows to whole hours of its bounds).
    if ((checked.firstRows === undefined && checked.newestRows === undefined && checked.hourCounts === undefined) || (template !== undefined && (await this.#rowsAreEvents(template)))) return checked;
    const { firstRows: _first, newestRows: _newest, hourCounts: _hourly, ...rest } = checked;
    return rest;
  }

  /** Whether a source-table template keeps events as they are (first-rows.ts), parsed once per template. */
  #rowsAreEvents(template: string): Promise<boolean> {
    let known = this.#eventTemplates.get(template);
    if (known === undefined) {
      known = this.parser.serialize(template).then(
        (json) => rowsAreEvents({ json }),
        () => false,
      );
      this.#eventTemplates.set(template, known);
    }
    return known;
  }

  /** BigQuery SQL over the statement's source tables, translated for ClickHouse: DuckDB's dialect cannot run there. */
  async #checkClickHouse(statement: EngineStatement, sql: string, maxRows: number, target: Extract<EngineTarget, { dialect: 'clickhouse' }>): Promise<CheckedSql> {
    if (this.dialect !== 'bigquery') {
      throw new InvalidParameterError('sql', "The ClickHouse engine runs a caller's sql in the BigQuery dialect (sqlDialect: 'bigquery'), not DuckDB's.");
    }
    const template = statement.sourceTables?.clickhouse;
    if (template === undefined) throw callerDialectRefused(statement.name);
    const sources = target.sources.list;
    let tables = this.#clickhouseTables.get(template);
    if (!tables) {
      tables = clickhouseSourceTables(
        template,
        sources.map((d) => ({ relation: d.relation, table: target.tables.get(d.relation)!, projectColumn: d.projectColumn })),
      );
      this.#clickhouseTables.set(template, tables);
    }
    const rules = { tables: sources.map((d) => d.relation), maxRows };
    const checked = await checkBigQueryText(sql, this.#schemaOf(target.sources), 'clickhouse', rules, this.parser, tables);
    return { sql: checked.sql, key: checked.key, columns: checked.columns };
  }
}
