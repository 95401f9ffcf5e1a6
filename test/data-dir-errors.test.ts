/**
 * A data dir that cannot be one is told naming the option and what is wrong (a file where the
 * folder is due, a parent that cannot be written), by createEndpoints (`storage.dataDir`) and by
 * the CLI (`--data-dir`), never as the system's "EEXIST" or "ENOENT ... mkdir".
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main';
import { createEndpoints, InvalidOptionError } from '../src/index';
import { memoryIO } from './support/cli';
import { HANG_MS } from './support/hang-guard';
import { tempDir } from './support/log-files';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('a data dir that cannot be one', () => {
  const tmp = tempDir('le-data-dir-');
  afterAll(() => {
    if (existsSync(tmp.path('read-only'))) chmodSync(tmp.path('read-only'), 0o755);
    tmp.cleanup();
  });
  const file = tmp.path('a-file');
  writeFileSync(file, 'not a folder\n');
  writeFileSync(tmp.path('events.ndjson'), '{"message":"x"}\n');

  it('createEndpoints: a file, or a path below a file, is an InvalidOptionError of storage.dataDir saying so', async () => {
    for (const [dataDir, message] of [
      [file, `storage.dataDir '${file}' is a file, not a folder.`],
      [`${file}/data`, `storage.dataDir '${file}/data' cannot be created: '${file}' is a file, not a folder.`],
    ]) {
      const error = await createEndpoints({ storage: { dataDir: dataDir! } }).catch((e: unknown) => e);
      expect(error, dataDir).toBeInstanceOf(InvalidOptionError);
      expect(error).toMatchObject({ code: 'invalid_option', option: 'storage.dataDir', message });
    }
  });

  it('serve and ingest: a file as --data-dir is a usage error naming the flag (exit 2)', async () => {
    for (const argv of [
      ['serve', '--data-dir', file, '--no-auth', '--port', '0'],
      ['ingest', tmp.path('events.ndjson'), '--source', 'edge', '--data-dir', file],
    ]) {
      const { io, out } = memoryIO();
      expect(await main(argv, io, 'test'), argv.join(' ')).toBe(2);
      expect(out.stderr).toBe(`error: --data-dir '${file}' is a file, not a folder.\nSee: log-endpoints ${argv[0]} --help\n`);
    }
  });

  it('a parent that cannot be written is named, by the CLI and by createEndpoints (a real process of a user without write access)', async () => {
    const parent = tmp.path('read-only');
    mkdirSync(parent);
    chmodSync(parent, 0o555);
    const dataDir = `${parent}/data`;
    const cli = await node(['src/cli.ts', 'serve', '--data-dir', dataDir, '--no-auth', '--port', '0']);
    expect(cli.stderr).toBe(`error: --data-dir '${dataDir}' cannot be created: '${parent}' is not writable (EACCES).\nSee: log-endpoints serve --help\n`);
    expect(cli.code).toBe(2);
    const script = `
      import { createEndpoints } from './src/index.ts';
      await createEndpoints({ storage: { dataDir: ${JSON.stringify(dataDir)} } }).catch((e) => process.stderr.write(e.option + ': ' + e.message));`;
    const library = await node(['--input-type=module', '-e', script]);
    expect(library.stderr).toBe(`storage.dataDir: storage.dataDir '${dataDir}' cannot be created: '${parent}' is not writable (EACCES).`);
  });
});

/**
 * `node --import tsx <args>` from the repository, by a process the folder's mode bits bind: exit
 * code and stderr. Root writes anywhere, so as root the process keeps its user (it owns the
 * checkout, so it reads it wherever it is cloned, a 0700 home or temp folder too) but runs
 * without the capabilities that override file modes (`setpriv`, util-linux: on every Debian).
 */
function node(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const command = [process.execPath, '--import', 'tsx', ...args];
  const [file, ...argv] = process.getuid?.() === 0 ? ['setpriv', '--inh-caps=-dac_override,-dac_read_search', '--bounding-set=-dac_override,-dac_read_search', ...command] : command;
  return new Promise((resolve) => {
    execFile(file!, argv, { cwd: ROOT, timeout: HANG_MS, env: { ...process.env, LOG_ENDPOINTS_API_KEYS: '' } }, (error, _stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr });
    });
  });
}
