import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LOG_TABLES, type LogTable } from '../test/support/supabase/vector-sources';
import { loadChdb, type ChdbSession } from './peers/install-chdb';
import type { StudioData } from './studio-data';

/**
 * ClickHouse in process (npm `chdb`, installed on demand) holding the week as an expert would lay
 * it out for Studio's questions: one MergeTree table per feed, ordered by time (every Studio query
 * is a time range), the id with a bloom filter (the single log is found by id), `metadata` kept as
 * its JSON text (it is open-ended), and a MATERIALIZED column for each nested field Studio's
 * requests read that the Supabase descriptors declare typed (bench/studio-chdb-fields.ts; added by
 * `materialize`), the others read with `JSONExtract`. Loaded once from the week's NDJSON into
 * `<data>/chdb` and reused.
 */

const TABLE = (name: string) => `CREATE TABLE ${name} (
  id String,
  timestamp DateTime64(6, 'UTC'),
  event_message Nullable(String),
  project LowCardinality(Nullable(String)),
  metadata String,
  INDEX id_bloom id TYPE bloom_filter GRANULARITY 4
) ENGINE = MergeTree ORDER BY timestamp`;

export interface ChdbPeer {
  run(sql: string, params: Record<string, unknown>): Promise<Array<Record<string, unknown>>>;
  /**
   * Adds `column` to `table` as a ClickHouse user adds a field a query reads often: a MATERIALIZED
   * column computed from `expression` (over `metadata`), written into the loaded parts, so a
   * query reads it instead of parsing the JSON. Once per loaded week (kept beside the tables);
   * resolves to the seconds it took, or null when an earlier run's column was reused. The Studio
   * section gives the typed fields its cases read (bench/studio-chdb-fields.ts); the discovered
   * fields' phase one of its own.
   */
  materialize(table: LogTable, column: string, type: string, expression: string): Promise<number | null>;
  close(): void;
}

export async function openStudioChdb(data: StudioData, log: (line: string) => void): Promise<ChdbPeer> {
  const { Session } = await loadChdb(log);
  const path = join(data.dir, 'chdb');
  const marker = join(path, 'loaded.json');
  const expected = JSON.stringify(data.counts);
  const reuse = existsSync(marker) && (await readFile(marker, 'utf8')) === expected;
  if (!reuse) await rm(path, { recursive: true, force: true });
  const session: ChdbSession = new Session(path);
  if (reuse) {
    log('chdb: reusing the loaded tables');
  } else {
    for (const table of LOG_TABLES) {
      const started = Date.now();
      session.query(`DROP TABLE IF EXISTS ${table}`);
      session.query(TABLE(table));
      // Vector's ISO timestamps carry nanoseconds: cut to microseconds, as the library does.
      session.query(`INSERT INTO ${table} SELECT id, parseDateTime64BestEffort(replaceRegexpOne(timestamp, '(\\\\.\\\\d{6})\\\\d+', '\\\\1'), 6, 'UTC'), event_message, project, ifNull(metadata, '{}')
        FROM file('${data.files[table]}', JSONEachRow, 'id String, timestamp String, event_message Nullable(String), project Nullable(String), metadata Nullable(String)')
        SETTINGS input_format_json_read_objects_as_strings = 1, input_format_skip_unknown_fields = 1`);
      session.query(`OPTIMIZE TABLE ${table} FINAL`);
      log(`chdb: ${table}, ${session.query(`SELECT count() FROM ${table}`, 'TSV').trim()} rows in ${Math.round((Date.now() - started) / 1000)} s`);
    }
    await writeFile(marker, expected);
  }
  return {
    async run(sql, params) {
      const text = (await session.queryBindAsync(sql, params, { format: 'JSONEachRow' })).text();
      return text === ''
        ? []
        : text
            .trimEnd()
            .split('\n')
            .map((line) => {
              const { micros, ...row } = JSON.parse(line) as Record<string, unknown>;
              return micros === undefined ? row : { ...row, timestamp: micros };
            });
    },
    async materialize(table, column, type, expression) {
      // Its own marker: the tables' (loaded.json) says nothing of it, and a run stopped between
      // adding the column and writing it into the parts does it again.
      const done = join(path, `materialized-${table}-${column}.json`);
      const wanted = JSON.stringify({ type, expression });
      if (existsSync(done) && (await readFile(done, 'utf8')) === wanted) return null;
      const started = Date.now();
      session.query(`ALTER TABLE ${table} DROP COLUMN IF EXISTS ${column}`);
      session.query(`ALTER TABLE ${table} ADD COLUMN ${column} ${type} MATERIALIZED ${expression}`);
      // Written into the parts there are (new parts only would compute it otherwise), waited for.
      session.query(`ALTER TABLE ${table} MATERIALIZE COLUMN ${column} SETTINGS mutations_sync = 2`);
      await writeFile(done, wanted);
      const seconds = Math.round((Date.now() - started) / 100) / 10;
      log(`chdb: ${table}.${column} materialized in ${seconds} s`);
      return seconds;
    },
    close() {
      session.close();
    },
  };
}
