import type { DuckDBConnection } from '@duckdb/node-api';
import type { ListedFile } from '../../files/list-glob';
import { HEAD_ROWS_PER_PROJECT } from '../../dataset/newest-heads';
import { relationColumns, sourceRelation } from '../../duckdb/source-relations';
import { columnName } from '../../sql/column-name';
import type { SourceDescriptor } from '../../sources/source-descriptor';

/** Head rows held in all (about 1 KB each with the bench's events): a few busy days of a few hundred projects. */
const DEFAULT_MAX_ROWS = 64_000;

interface Entry {
  source: SourceDescriptor;
  day: string;
  /** The head files the table holds the newest rows of (path and size each). */
  heads: ReadonlySet<string>;
  table: string;
  rows: number;
  /** Queries reading the table now: it is dropped only when none is. */
  users: number;
  ready: Promise<void>;
  dropped: boolean;
}

/** One table of a day's heads, held for one query (`release` when it is done). */
export interface HeldHeads {
  /** The SELECT of the table, with the source's columns in relation order. */
  select: string;
  release(): void;
}

/**
 * The heads of a day's compacted files (each project's newest rows of each file: newest-heads.ts)
 * as one DuckDB table in memory per day, holding each project's newest rows of all of them: a
 * newest-first page (logs.all) reads one small table per day instead of decoding one head file
 * per data file. Managed storage adds a file to today's data with every compaction; its page then
 * costs what a day compacted into one file costs. A table is made once per set of head files (on
 * the first page that needs it: the day's previous table and the new heads when files were only
 * added, every head when some went, as a merge replaces files) and kept while its day's set stays
 * the same; the least recently made go past `maxRows`, once no query reads them.
 */
export class HeadTables {
  private readonly entries: Entry[] = [];
  private made = 0;
  private drops: Promise<unknown> = Promise.resolve();

  /** `run` runs a statement where no query's statements run (the engine's control connection): dropping a table. */
  constructor(
    private readonly run: (sql: string) => Promise<unknown>,
    private readonly maxRows = DEFAULT_MAX_ROWS,
  ) {}

  /**
   * The table of these heads (one day's files' heads, every file of the day), made now when
   * needed; null when they hold more rows than the tables may (read the files then).
   */
  async hold(connection: DuckDBConnection, source: SourceDescriptor, day: string, heads: readonly ListedFile[], parquetTypes: ReadonlyMap<string, string>): Promise<HeldHeads | null> {
    const keys = new Set(heads.map(versionOf));
    let entry = this.entries.find((e) => e.source === source && e.day === day && sameSet(e.heads, keys));
    if (!entry) {
      const rows = heads.reduce((n, h) => n + (h.headRows ?? Number.POSITIVE_INFINITY), 0);
      if (rows > this.maxRows) return null;
      // The day's newest table so far: when every head it holds is still listed, only the new ones are read.
      const previous = this.entries.find((e) => e.source === source && e.day === day && !e.dropped && [...e.heads].every((k) => keys.has(k)));
      entry = { source, day, heads: keys, table: `le_heads_${++this.made}`, rows: Math.min(rows, (previous?.rows ?? 0) + rows), users: 0, ready: Promise.resolve(), dropped: false };
      const made = entry;
      this.entries.push(made);
      if (previous) previous.users++;
      made.ready = this.make(
        connection,
        made,
        heads.filter((h) => !previous?.heads.has(versionOf(h))),
        parquetTypes,
        previous,
      ).finally(() => {
        if (previous) this.leave(previous);
      });
      made.ready.catch(() => {
        made.dropped = true;
        this.entries.splice(this.entries.indexOf(made), 1);
      });
    }
    entry.users++;
    try {
      await entry.ready;
    } catch (error) {
      entry.users--;
      throw error;
    }
    const held = entry;
    let released = false;
    this.evict();
    return {
      select: `SELECT ${columnListOf(source)} FROM ${held.table}`,
      release: () => {
        if (released) return;
        released = true;
        this.leave(held);
      },
    };
  }

  /** Waits for the tables being dropped (tests). */
  async settled(): Promise<void> {
    await this.drops;
  }

  private async make(connection: DuckDBConnection, entry: Entry, added: readonly ListedFile[], parquetTypes: ReadonlyMap<string, string>, previous: Entry | undefined): Promise<void> {
    const { source } = entry;
    await previous?.ready;
    const columns = columnListOf(source);
    const parts = [
      ...(previous ? [`SELECT ${columns} FROM ${previous.table}`] : []),
      ...(added.length ? [sourceRelation(source, { ndjson: [], parquet: added.map((h) => h.path), parquetTypes })] : []),
    ];
    // Each project's newest rows in logs.all's order, as a head holds them (newest-heads.ts).
    await connection.run(`
      CREATE TABLE ${entry.table} AS
      SELECT ${columns} FROM (
        SELECT *, row_number() OVER (PARTITION BY ${source.projectColumn} ORDER BY timestamp DESC, id ASC NULLS LAST) AS le_rank
        FROM (${parts.map((p) => `(${p})`).join('\nUNION ALL\n')})
      )
      WHERE le_rank <= ${HEAD_ROWS_PER_PROJECT}
      ORDER BY ${source.projectColumn}, timestamp DESC`);
    entry.rows = Number((await connection.runAndReadAll(`SELECT count(*) AS n FROM ${entry.table}`)).getRows()[0]?.[0] ?? 0);
  }

  private leave(entry: Entry): void {
    entry.users--;
    this.evict();
  }

  /** Drops the oldest tables no query reads, past `maxRows`, and those replaced by a newer table of their day. */
  private evict(): void {
    let rows = this.entries.reduce((n, e) => n + e.rows, 0);
    for (const entry of [...this.entries]) {
      const replaced = this.entries.some((e) => e !== entry && e.source === entry.source && e.day === entry.day && this.entries.indexOf(e) > this.entries.indexOf(entry));
      if (entry.users > 0 || (!replaced && rows <= this.maxRows)) continue;
      rows -= entry.rows;
      entry.dropped = true;
      this.entries.splice(this.entries.indexOf(entry), 1);
      const drop = entry.ready.then(() => this.run(`DROP TABLE IF EXISTS ${entry.table}`)).catch(() => undefined);
      this.drops = Promise.all([this.drops, drop]);
    }
  }
}

/** A source's relation columns, quoted and listed: once per descriptor (every Studio list names them). */
const COLUMN_LISTS = new WeakMap<SourceDescriptor, string>();

function columnListOf(source: SourceDescriptor): string {
  let list = COLUMN_LISTS.get(source);
  if (list === undefined) {
    list = relationColumns(source)
      .map(([name]) => columnName(name))
      .join(', ');
    COLUMN_LISTS.set(source, list);
  }
  return list;
}

/** One version of a head file: its path and size (a head rewritten under its name is another). */
function versionOf(file: ListedFile): string {
  return `${file.path}\0${file.size}`;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((k) => b.has(k));
}
