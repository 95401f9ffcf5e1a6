import { afterEach, describe, expect, it, vi } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { createDuckDBEngine } from '../src/engine/duckdb/duckdb-engine';
import { DuckDBBytesSampler } from '../src/duckdb/duckdb-bytes';
import { MemoryRelief } from '../src/duckdb/open-database';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';

describe('createDuckDBEngine when a step after opening DuckDB fails', () => {
  afterEach(() => vi.restoreAllMocks());

  it('closes the DuckDB it opened and stops its memory relief, then rethrows the failure', async () => {
    const failure = new Error('connect refused');
    vi.spyOn(DuckDBBytesSampler, 'open').mockRejectedValue(failure);
    const closed = vi.spyOn(DuckDBInstance.prototype, 'closeSync');
    const reliefClosed = vi.spyOn(MemoryRelief.prototype, 'close');
    const trims = vi.spyOn(MemoryRelief.prototype, 'startIdleTrims');

    await expect(createDuckDBEngine({ sourceSet: BUILT_IN_SOURCE_SET, sources: {}, memoryLimit: '256MB' })).rejects.toBe(failure);
    expect(closed).toHaveBeenCalledTimes(1);
    expect(reliefClosed).toHaveBeenCalledTimes(1);
    // The idle trims' timer is never started for an engine that does not exist.
    expect(trims).not.toHaveBeenCalled();
  });
});

describe("every connection of the engine's DuckDB", () => {
  afterEach(() => vi.restoreAllMocks());

  // The engine's pool connects on its own, after the first connection set the instance up: a
  // setting made with a plain SET was that connection's alone. Without the footer cache each
  // statement parsed its files' Parquet footers again (docs/performance.md, "Parquet footers on every connection").
  it('keeps Parquet footers cached and reads timestamps in UTC, not only the first connection', async () => {
    const created = vi.spyOn(DuckDBInstance, 'create');
    const engine = await createDuckDBEngine({ sourceSet: BUILT_IN_SOURCE_SET, sources: {}, memoryLimit: '256MB' });
    try {
      const instance = await created.mock.results[0]!.value;
      const connection = await (instance as DuckDBInstance).connect();
      try {
        const settings = (await connection.runAndReadAll("SELECT current_setting('parquet_metadata_cache') AS footers, current_setting('TimeZone') AS zone")).getRowObjects();
        expect(settings).toEqual([{ footers: true, zone: 'UTC' }]);
      } finally {
        connection.closeSync();
      }
    } finally {
      await engine.close();
    }
  });
});
