import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError, type Endpoints } from '../src/index';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';

describe('engine time limit (real DuckDB)', () => {
  const tmp = tempDir();
  let ep: Endpoints;

  beforeAll(async () => {
    // Enough rows that a query takes far longer than the 1 ms limit, wherever an interrupt lands.
    const lines = [];
    for (let i = 0; i < 100_000; i++) lines.push(edgeEvent({ project: `p${i % 7}`, timestamp: 1795256102123456 - i * 1_000_000 }));
    writeLines(tmp.path('edge.ndjson'), lines);
    ({ ep } = await endpointsAt({ edgeLogs: tmp.path('edge.ndjson') }, '2026-11-21T12:00:00Z', {
      limits: { queryTimeoutMs: 1, maxConcurrentQueries: 1 },
    }));
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  it('every query past the limit is interrupted and answers timeout (504), and the engine stays usable', async () => {
    for (let i = 0; i < 20; i++) {
      const error = await ep.usageApiCounts({ project: 'p1', interval: 'daily' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineError);
      expect(error).toMatchObject({ code: 'timeout', status: 504 });
    }
    await expect(ep.ping()).resolves.toBeUndefined();
  });
});

describe('engine memory limit (real DuckDB)', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  it('a query past the memory limit answers memory_limit (503, Retry-After) with the detail on cause, not query_failed', async () => {
    const lines = [];
    for (let i = 0; i < 50_000; i++) lines.push(edgeEvent({ project: `p${i % 7}`, timestamp: 1795256102123456 - i * 1_000_000 }));
    writeLines(tmp.path('edge.ndjson'), lines);
    const { ep } = await endpointsAt({ edgeLogs: tmp.path('edge.ndjson') }, '2026-11-21T12:00:00Z', {
      duckdb: { memoryLimit: '1MB', threads: 1 },
    });
    try {
      const error = await ep.logsAll({ project: 'p1', project_tier: 'ENTERPRISE' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineError);
      expect(error).toMatchObject({ code: 'memory_limit', status: 503, retryAfterSeconds: 1 });
      expect(String((error as Error).cause)).toMatch(/Out of Memory/);
    } finally {
      await ep.close();
    }
  });
});
