import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BurstDatabase } from '../src/duckdb/burst-database';
import { tempDir } from './support/log-files';

// The DuckDB a compaction burst keeps open between its runs (burst-database.ts): kept only as it
// was opened, never after a failure, closed when the burst ends.
describe('the DuckDB of a compaction burst', () => {
  const tmp = tempDir('le-burst-');
  afterAll(() => tmp.cleanup());
  const settings = { threads: 1, memoryLimit: '64MB' };
  const setting = async (lent: { connection: { runAndReadAll(sql: string): Promise<{ getRows(): unknown[][] }> } }, name: string) =>
    String((await lent.connection.runAndReadAll(`SELECT current_setting('${name}')`)).getRows()[0]![0]);

  it('lends one instance to work after work under the same settings, spilling into its own folder, and closes it when asked', async () => {
    const database = new BurstDatabase(tmp.path('one', 'spill'));
    const first = await database.lend(settings, tmp.path('one', 'run-1'));
    await first.connection.run('CREATE TEMP TABLE marker AS SELECT 1 AS x');
    expect(await setting(first, 'temp_directory')).toBe(tmp.path('one', 'spill'));
    await first.release(false);
    const second = await database.lend({ ...settings }, tmp.path('one', 'run-2'));
    // The same instance: what the first left is there.
    expect((await second.connection.runAndReadAll('SELECT x FROM marker')).getRows()).toEqual([[1]]);
    await second.release(false);
    expect(database.opens).toBe(1);
    await database.close();
    expect(database.isOpen).toBe(false);
    const third = await database.lend(settings, tmp.path('one', 'run-3'));
    expect(database.opens).toBe(2);
    await third.release(false);
    await database.close();
  });

  it('spills into its own folder, made under parents that did not exist, emptied of what a killed process left before it opens, and gone once closed', async () => {
    const spill = tmp.path('four', 'not', 'there', 'spill');
    const database = new BurstDatabase(spill);
    const first = await database.lend({ threads: 1, memoryLimit: '64MB' }, tmp.path('four', 'run'));
    // A sort past the limit spills.
    await first.connection.run('CREATE TEMP TABLE sorted AS SELECT md5(i::VARCHAR) || md5((i + 1)::VARCHAR) AS s FROM range(600000) r(i) ORDER BY s');
    expect(readdirSync(spill).length).toBeGreaterThan(0);
    await first.release(false);
    await database.close();
    expect(existsSync(spill)).toBe(false);
    mkdirSync(spill);
    writeFileSync(join(spill, 'duckdb_temp_storage_S32K-0.tmp'), 'left by a killed process');
    const second = await database.lend({ threads: 1, memoryLimit: '64MB' }, tmp.path('four', 'run'));
    expect(existsSync(join(spill, 'duckdb_temp_storage_S32K-0.tmp'))).toBe(false);
    await second.release(false);
    await database.close();
  });

  it('opens another instance for other settings (a retry at twice the limit), and after work that failed', async () => {
    const database = new BurstDatabase(tmp.path('two', 'spill'));
    await (await database.lend(settings, tmp.path('two', 'run'))).release(false);
    const doubled = await database.lend({ ...settings, memoryLimit: '128MB' }, tmp.path('two', 'run'));
    expect(database.opens).toBe(2);
    expect(await setting(doubled, 'memory_limit')).toMatch(/^12[0-9]\.\d MiB$/);
    await doubled.release(true);
    expect(database.isOpen).toBe(false);
    await (await database.lend({ ...settings, memoryLimit: '128MB' }, tmp.path('two', 'run'))).release(false);
    expect(database.opens).toBe(3);
    await database.close();
  });

  it('closes a lent instance when it is returned, and gives work lent alongside an instance of its own', async () => {
    const database = new BurstDatabase(tmp.path('three', 'spill'));
    const lent = await database.lend(settings, tmp.path('three', 'run-1'));
    const alongside = await database.lend(settings, tmp.path('three', 'run-2'));
    expect(await setting(alongside, 'temp_directory')).toBe(tmp.path('three', 'run-2'));
    await alongside.release(false);
    await database.close();
    // Still lent: open until it comes back.
    expect(database.isOpen).toBe(true);
    expect((await lent.connection.runAndReadAll('SELECT 41 + 1')).getRows()).toEqual([[42]]);
    await lent.release(false);
    expect(database.isOpen).toBe(false);
    expect(database.opens).toBe(1);
  });
});
