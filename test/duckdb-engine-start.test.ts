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
