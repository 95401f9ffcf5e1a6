import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { keysIn, NarrowedRollups, type ComputeKeys } from '../src/engine/duckdb/narrowed-rollups';
import { fullQuerySql } from '../src/engine/duckdb/statement-sql';
import { compiledStatement } from '../src/query/statement-reads';
import { querySql } from '../src/sql/query-files';
import { edgeLogs } from '../src/sources/edge-logs';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import type { ListedFile } from '../src/files/list-glob';
import type { ReadSet } from '../src/files/source-reader';
import type { SourceFiles } from '../src/duckdb/source-relations';
import { tempDir } from './support/log-files';
import { defineSource, InvalidOptionError } from '../src/index';

// The gateway's trigram maps narrowed to the origins a call's literal keeps (narrowed-rollups.ts):
// computed once per stored map version and literal, never served for another version of a file.

const MAP = 'edge_logs_url_grams';

/** A data file of a dataset with its stored map, as a snapshot lists it. */
function dataFile(path: string, map: { bytes: number; crc32?: number }): ListedFile {
  return { path, kind: 'parquet', size: 100, mtimeMs: 0, ino: 1, dataset: '/d', rollups: { [MAP]: { path: `${path}.grams`, ...map } } };
}

function inputs(files: ListedFile[]): { read: ReadSet; files: SourceFiles } {
  const read = { ndjson: [], ranges: [], parquet: files, skipped: [], globs: [], covered: [] } as unknown as ReadSet;
  const stored = { [MAP]: { companions: files.map((f) => f.rollups![MAP]!.path), dataFiles: files.map((f) => f.path) } };
  return { read, files: { ndjson: [], parquet: files.map((f) => f.path), parquetTypes: new Map(), stored } };
}

/** A computation that answers from a table of file -> origins, counting its calls. */
function counting(origins: Record<string, string[]>): ComputeKeys & { calls: string[] } {
  const calls: string[] = [];
  return Object.assign(
    async (_sql: string, _rollup: string, companion: string, text: string) => {
      calls.push(`${companion} ${text}`);
      return origins[companion] ?? [];
    },
    { calls },
  );
}

describe('stored trigram maps narrowed per literal', () => {
  it('computes a stored map version once per literal, then binds the kept origins in its place', async () => {
    const narrowed = new NarrowedRollups();
    const compute = counting({ '/a.grams': ['a.example.co'], '/b.grams': ['b.example.co'] });
    const { read, files } = inputs([dataFile('/a', { bytes: 10, crc32: 1 }), dataFile('/b', { bytes: 20, crc32: 2 })]);
    const params = { project_required: 'example' };
    const first = await narrowed.apply(edgeLogs, [MAP], read, files, params, compute);
    expect(first.lists).toEqual({ le_kept_edge_logs_url_grams: ['a.example.co', 'b.example.co'] });
    expect(first.files.stored![MAP]!.keys).toEqual({ param: 'le_kept_edge_logs_url_grams', column: 'origin' });
    expect(compute.calls).toEqual(['/a.grams example', '/b.grams example']);
    // Kept: no computation on the next call with that literal.
    expect((await narrowed.apply(edgeLogs, [MAP], read, files, params, compute)).lists).toEqual(first.lists);
    expect(compute.calls.length).toBe(2);
    // Another literal is computed for itself.
    await narrowed.apply(edgeLogs, [MAP], read, files, { project_required: 'other' }, compute);
    expect(compute.calls.slice(2)).toEqual(['/a.grams other', '/b.grams other']);
    // The statement's text reads the bound list, not the stored files.
    const sql = fullQuerySql(compiledStatement(querySql('duckdb', 'usage.api-counts.hours'), BUILT_IN_SOURCE_SET), new Map([[edgeLogs, first.files]]));
    expect(sql).toContain('SELECT unnest($le_kept_edge_logs_url_grams) AS origin');
    expect(sql).not.toContain('/a.grams');
  });

  it('computes a map rewritten under the same path and size again (its CRC-32 tells the version)', async () => {
    const narrowed = new NarrowedRollups();
    const before = counting({ '/a.grams': ['old.example.co'] });
    const old = inputs([dataFile('/a', { bytes: 10, crc32: 1 })]);
    expect((await narrowed.apply(edgeLogs, [MAP], old.read, old.files, { project_required: 'example' }, before)).lists.le_kept_edge_logs_url_grams).toEqual(['old.example.co']);
    const after = counting({ '/a.grams': ['new.example.co'] });
    for (const version of [
      { bytes: 10, crc32: 9 },
      { bytes: 11, crc32: 1 },
    ]) {
      const now = inputs([dataFile('/a', version)]);
      expect((await narrowed.apply(edgeLogs, [MAP], now.read, now.files, { project_required: 'example' }, after)).lists.le_kept_edge_logs_url_grams).toEqual(['new.example.co']);
    }
    expect(after.calls.length).toBe(2);
  });

  it('leaves the stored maps as they are where no version is recorded, or the literal is not text', async () => {
    const narrowed = new NarrowedRollups();
    const compute = counting({});
    const unversioned = inputs([dataFile('/a', { bytes: 10 })]);
    const one = await narrowed.apply(edgeLogs, [MAP], unversioned.read, unversioned.files, { project_required: 'example' }, compute);
    expect(one).toEqual({ files: unversioned.files, lists: {} });
    const versioned = inputs([dataFile('/a', { bytes: 10, crc32: 1 })]);
    expect(await narrowed.apply(edgeLogs, [MAP], versioned.read, versioned.files, { project_required: null }, compute)).toEqual({ files: versioned.files, lists: {} });
    expect(compute.calls).toEqual([]);
  });

  it('keeps exactly the origins the statements test as candidates (a map holding every trigram of the literal)', async () => {
    const tmp = tempDir();
    const instance = await DuckDBInstance.create(':memory:');
    const db = await instance.connect();
    try {
      const urls = ['https://abcdefghij.supabase.co/rest/v1/x', 'https://klmnopqrst.supabase.co/auth/v1/y', 'https://api.custom.com/rest?ref=abcdefghij'];
      const path = join(tmp.dir, 'grams.parquet');
      await db.run(`COPY (WITH edge_logs AS (SELECT unnest([${urls.map((u) => `'${u}'`).join(', ')}]) AS request_url)\n${edgeLogs.rollups[MAP]!.sql}) TO '${path}' (FORMAT parquet)`);
      const keys = (text: string) => keysIn(db, edgeLogs.rollups[MAP]!.narrowedBy!.sql, MAP, path, text);
      expect(await keys('abcdefghij')).toEqual(['abcdefghij.supabase.co', 'api.custom.com']);
      expect(await keys('klmnopqrst')).toEqual(['klmnopqrst.supabase.co']);
      expect(await keys('supabase')).toEqual(['abcdefghij.supabase.co', 'klmnopqrst.supabase.co']);
      expect(await keys('no-such-text')).toEqual([]);
    } finally {
      db.closeSync();
      instance.closeSync();
      tmp.cleanup();
    }
  });
});

describe('defineSource: a rollup narrowedBy', () => {
  it('needs its rest, a parameter and column name, and a SELECT over the rollup binding $text', () => {
    const base = { name: 'x', relation: 'x_logs', columns: { project: 'text', url: 'text' }, projectColumn: 'project' } as const;
    const rollup = (narrowedBy: Record<string, unknown>, rest: string | null = 'SELECT project AS origin, NULL AS grams, url AS request_url FROM x_logs') => ({
      ...base,
      rollups: { x_maps: { sql: 'SELECT project AS origin, NULL AS grams FROM x_logs', ...(rest === null ? {} : { rest }), narrowedBy } },
    });
    const good = { param: 'literal', column: 'origin', sql: 'SELECT origin FROM x_maps WHERE $text IS NOT NULL' };
    expect(defineSource(rollup(good) as never).rollups.x_maps!.narrowedBy).toEqual(good);
    for (const config of [
      rollup(good, null),
      rollup({ ...good, param: 'not a name' }),
      rollup({ ...good, column: '' }),
      rollup({ ...good, sql: 'SELECT origin FROM other WHERE $text IS NOT NULL' }),
      rollup({ ...good, sql: 'SELECT origin FROM x_maps' }),
      rollup({ ...good, sql: 42 }),
    ]) {
      expect(() => defineSource(config as never)).toThrow(InvalidOptionError);
    }
  });
});
