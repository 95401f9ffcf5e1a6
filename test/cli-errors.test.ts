import { describe, expect, it, vi } from 'vitest';
import { main } from '../src/cli/main';
import { EngineError, type Engine } from '../src/index';
import { memoryIO } from './support/cli';

// The engine's own error, as DuckDB words them: SQL and file paths that must not reach the terminal.
const CAUSE = new Error('Binder Error: Referenced column "timestamp" not found\nLINE 3: FROM read_parquet([\'/srv/secret/logs/edge/part-1.parquet\'])\n              ^');

vi.mock(import('../src/engine/duckdb/duckdb-engine'), async (original) => ({
  ...(await original()),
  createDuckDBEngine: async (): Promise<Engine> => ({
    target: { dialect: 'duckdb' },
    run: async () => {
      throw new EngineError('query_failed', 'The query failed in the engine.', { cause: CAUSE });
    },
    checkPattern: async () => null,
    ping: async () => undefined,
    inspectSources: async () => [],
    close: async () => undefined,
  }),
}));

const QUERY = ['query', 'logs.all', '-p', 'project=abc', '-p', 'project_tier=FREE', '--edge-logs', 'logs/edge/*.parquet'];

/** stderr without the warnings printed before the query (the glob above matches no file here). */
const withoutWarnings = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => !line.startsWith('warning: '))
    .join('\n');

describe('CLI errors', () => {
  it('an engine error is one line without SQL or paths, exit 1', async () => {
    const { io, out } = memoryIO();
    expect(await main(QUERY, io, 'test')).toBe(1);
    expect(withoutWarnings(out.stderr)).toBe('error [query_failed]: The query failed in the engine. (details: LOG_ENDPOINTS_DEBUG=1)\n');
    expect(out.stdout).toBe('');
  });

  it("with LOG_ENDPOINTS_DEBUG=1 the stack and the engine's own message follow", async () => {
    const { io, out } = memoryIO({ LOG_ENDPOINTS_DEBUG: '1' });
    expect(await main(QUERY, io, 'test')).toBe(1);
    expect(withoutWarnings(out.stderr)).toMatch(/^EngineError: The query failed in the engine\.\n\s+at /);
    expect(out.stderr).toContain('Caused by: Error: Binder Error: Referenced column "timestamp" not found');
    expect(out.stderr).toContain('/srv/secret/logs/edge/part-1.parquet');
    expect(out.stderr.trimEnd().split('\n').at(-1)).toBe('error [query_failed]: The query failed in the engine.');
  });

  it('an option the library refuses is a usage error: one line, exit 2', async () => {
    const { io, out } = memoryIO();
    expect(await main([...QUERY, '--memory-limit', '100KB'], io, 'test')).toBe(2);
    expect(withoutWarnings(out.stderr)).toBe('error [invalid_option]: memoryLimit must be at least 128MB (the process alone takes about 120 MiB), not "100KB".\n');
  });
});
