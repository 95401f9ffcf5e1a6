/**
 * DuckDB's allocator gives freed pages back after 100 ms in the `log-endpoints` process
 * (src/duckdb/allocator-env.ts, docs/operations.md, "Memory"): the command sets jemalloc's options
 * before DuckDB's library loads, and an operator's own options come after ours and win.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DUCKDB_ALLOCATOR_CONF, DUCKDB_ALLOCATOR_ENV, duckdbAllocatorConf } from '../src/duckdb/allocator-env';
import { spawnCli, waitForStdout } from './support/cli';
import { tempDir } from './support/log-files';

/** jemalloc's decay options as it prints them at exit (`opt.dirty_decay_ms: 0 (...)`). */
function decayOf(stats: string): { dirty: number | null; muzzy: number | null } {
  const option = (name: string) => {
    const value = new RegExp(`opt\\.${name}_decay_ms: (-?\\d+)`).exec(stats)?.[1];
    return value === undefined ? null : Number(value);
  };
  return { dirty: option('dirty'), muzzy: option('muzzy') };
}

/** Runs `serve --supabase` with the operator's `conf` (and jemalloc asked to print its options at exit), stops it, and returns the options it ran with. */
async function allocatorOfServe(dataDir: string, conf?: string): Promise<{ dirty: number | null; muzzy: number | null }> {
  const child = spawnCli(['serve', '--supabase', '--data-dir', dataDir, '--port', '0'], {
    [DUCKDB_ALLOCATOR_ENV]: ['stats_print:true,stats_print_opts:mdablxeh', conf].filter(Boolean).join(','),
    LOGFLARE_PRIVATE_ACCESS_TOKEN: 'p',
    LOGFLARE_PUBLIC_ACCESS_TOKEN: 'q',
  });
  const [, url] = await waitForStdout(child, /Listening on (http:\/\/\S+) /);
  // Answering means the server runs and its signal handlers are set: SIGTERM then stops it (and
  // exit runs jemalloc's printing) instead of killing it.
  expect((await fetch(`${url}/health`)).status).toBe(200);
  const exited = new Promise((done) => child.once('close', done));
  child.kill('SIGTERM');
  await exited;
  return decayOf(child.output.stderr);
}

describe("DuckDB's allocator in the log-endpoints process", () => {
  const tmp = tempDir('le-allocator-');
  afterAll(() => tmp.cleanup());

  it('puts ours first and an operator’s options after them', () => {
    expect(DUCKDB_ALLOCATOR_CONF).toBe('dirty_decay_ms:100,muzzy_decay_ms:0');
    expect(duckdbAllocatorConf({})).toBe(DUCKDB_ALLOCATOR_CONF);
    expect(duckdbAllocatorConf({ [DUCKDB_ALLOCATOR_ENV]: ' ' })).toBe(DUCKDB_ALLOCATOR_CONF);
    expect(duckdbAllocatorConf({ [DUCKDB_ALLOCATOR_ENV]: 'dirty_decay_ms:500' })).toBe(`${DUCKDB_ALLOCATOR_CONF},dirty_decay_ms:500`);
  });

  // jemalloc prints its options at exit when asked to (stats_print): what DuckDB's allocator ran
  // with, which it reads only as the library loads, so the options are there only if the command
  // set them before loading it.
  it('runs serve with freed pages given back after 100 ms', async () => {
    // DuckDB's own default, without the command's options, is a second for both.
    expect(await allocatorOfServe(tmp.path('data-ours'))).toEqual({ dirty: 100, muzzy: 0 });
  });

  it("lets an operator's option win", async () => {
    expect(await allocatorOfServe(tmp.path('data-theirs'), 'dirty_decay_ms:700')).toEqual({ dirty: 700, muzzy: 0 });
  });
});
