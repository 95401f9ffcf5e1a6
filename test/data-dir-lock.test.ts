import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireLock, LockedError, type LockRecord } from '../src/util/lock-file';
import { DataDirLockedError, LOCK_FILE, lockDataDir } from '../src/dataset/data-dir-lock';
import { openWalSet } from '../src/managed/wal/wal-set';
import { runCli, spawnCli, waitForStdout } from './support/cli';
import { HANG_MS } from './support/hang-guard';
import { tempDir } from './support/log-files';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';

const tmp = tempDir('le-lock-');
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  tmp.cleanup();
});

let n = 0;
const freshDir = () => {
  const dir = tmp.path(`d${++n}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const bootId = () => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
const record = (over: Partial<LockRecord>): LockRecord => ({
  token: 'other',
  purpose: 'serve',
  host: 'elsewhere',
  pid: 1,
  since: '2026-11-21T10:00:00.000Z',
  beat: 0,
  boot: null,
  socket: null,
  ...over,
});

/** Another process holding a lock (see support/hold-lock.ts); resolves once it holds it. */
async function holder(path: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/hold-lock.ts', path], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => (String(chunk).startsWith('held') ? resolve() : undefined));
    child.once('exit', (code) => reject(new Error(`the holder exited with ${code}`)));
  });
  return child;
}

/**
 * A fake passage of time for the lease: `sleep` moves the clock and runs `during` (what the other
 * holder does meanwhile), so a lease of 10 s is judged without waiting 10 s.
 */
function fakeTime(during: () => void = () => undefined) {
  let t = 0;
  return {
    now: () => t,
    sleep: async (ms: number) => {
      t += ms;
      during();
    },
  };
}

describe('the lock: one writer whatever the PID namespace or host', () => {
  it('refuses a second taker in this process, and is free again once released', async () => {
    const dir = freshDir();
    const first = await openWalSet(dir, BUILT_IN_SOURCE_SET);
    const held = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as LockRecord;
    expect(held).toMatchObject({ token: expect.stringMatching(/^[0-9a-f]{32}$/), host: hostname(), boot: bootId() });
    const refused = await openWalSet(dir, BUILT_IN_SOURCE_SET).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DataDirLockedError);
    expect((refused as Error).message).toMatch(/is in use by this process/);
    await first.close();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    expect(readdirSync(dir).filter((f) => f.endsWith('.sock'))).toEqual([]);
    await (await openWalSet(dir, BUILT_IN_SOURCE_SET)).close();
  });

  it('refuses while another process on this machine holds it, and takes it at once after that process is killed', async () => {
    const dir = freshDir();
    const child = await holder(join(dir, LOCK_FILE));
    // The pid in the file is never compared: the holder answers on its socket.
    const refused = await lockDataDir(dir).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DataDirLockedError);
    expect((refused as Error).message).toContain(`is in use by process ${child.pid} on host ${hostname()} (hold-lock test`);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    // Dead on this kernel: its socket refuses connections, so no lease has to run out.
    const time = fakeTime();
    const lock = await lockDataDir(dir, 'serve', time);
    expect(time.now()).toBe(1000); // one beat: the pause that confirms no other newcomer took it too
    expect(readdirSync(dir).filter((f) => f.endsWith('.sock'))).toHaveLength(1); // the dead holder's socket is gone
    await lock.release();
  });

  it('on another host (no probe): a lease still renewed is refused, one that stopped changing is taken over', async () => {
    const dir = freshDir();
    const path = join(dir, LOCK_FILE);
    let beat = 0;
    writeFileSync(path, JSON.stringify(record({ boot: 'another-kernel' })));
    // The other host renews every second: the newcomer sees the change and refuses.
    const renewing = fakeTime(() => writeFileSync(path, JSON.stringify(record({ boot: 'another-kernel', beat: ++beat }))));
    await expect(lockDataDir(dir, 'serve', renewing)).rejects.toThrow(/is in use by process 1 on host elsewhere \(serve/);
    expect(renewing.now()).toBeLessThan(10_000);
    // It stops renewing (crashed): after 10 s without a change on the newcomer's clock, it is stale.
    const stopped = fakeTime();
    const lock = await lockDataDir(dir, 'serve', stopped);
    expect(stopped.now()).toBeGreaterThanOrEqual(10_000);
    expect((JSON.parse(readFileSync(path, 'utf8')) as LockRecord).token).toBe(lock.token);
    await lock.release();
  });

  it("a dataset's lock left inside a data dir this process holds is taken over at once; outside it, the lease runs", async () => {
    const dir = freshDir();
    const path = join(dir, 'edgeLogs', 'parquet', '_compact', 'LOCK');
    mkdirSync(join(path, '..'), { recursive: true });
    // A compaction killed with its server: no probe answers for it (no socket), as on a long path.
    writeFileSync(path, JSON.stringify(record({ boot: bootId(), purpose: 'compact' })));
    const outside = fakeTime();
    const waited = await acquireLock(path, 'compact', outside, { enclosedBy: join(dir, LOCK_FILE) });
    expect(outside.now()).toBeGreaterThanOrEqual(10_000);
    await waited.release();
    writeFileSync(path, JSON.stringify(record({ boot: bootId(), purpose: 'compact' })));
    const dataDir = await lockDataDir(dir);
    const inside = fakeTime();
    const lock = await acquireLock(path, 'compact', inside, { enclosedBy: join(dir, LOCK_FILE) });
    expect(inside.now()).toBe(0);
    expect((JSON.parse(readFileSync(path, 'utf8')) as LockRecord).token).toBe(lock.token);
    await lock.release();
    await dataDir.release();
  });

  it('a lock of an older version (a pid, no token) is judged by the lease alone', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, LOCK_FILE), '1\nsomewhere\n');
    const time = fakeTime();
    const lock = await lockDataDir(dir, 'serve', time);
    expect(time.now()).toBeGreaterThanOrEqual(10_000);
    await lock.release();
  });

  it('of two newcomers racing for one stale lock, exactly one gets it', async () => {
    const path = join(freshDir(), LOCK_FILE);
    // Left by a holder killed on this kernel: both newcomers find it stale at once.
    writeFileSync(path, JSON.stringify(record({ boot: bootId(), socket: '.gone.sock' })));
    const results = await Promise.allSettled([acquireLock(path, 'a', { renewMs: 50 }), acquireLock(path, 'b', { renewMs: 50 })]);
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: expect.any(LockedError) });
    await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof acquireLock>>>).value.release();
  });

  it('a holder whose lease was not renewed for half its life takes no events until it is renewed again', async () => {
    const dir = freshDir();
    const time = fakeTime();
    const set = await openWalSet(dir, BUILT_IN_SOURCE_SET, {}, time);
    await set.wals.edgeLogs.append(Buffer.from('{"id":"a"}\n'));
    // Five seconds without a renewal (a stalled disk, a frozen process): a newcomer may soon judge it stale.
    await time.sleep(5000);
    await expect(set.wals.edgeLogs.append(Buffer.from('{"id":"b"}\n'))).rejects.toMatchObject({ code: 'overloaded', retryAfterSeconds: 1 });
    // The next renewal (every second) makes it fresh again.
    await expect
      .poll(
        () =>
          set.wals.edgeLogs.append(Buffer.from('{"id":"c"}\n')).then(
            () => 'taken',
            () => 'refused',
          ),
        { timeout: HANG_MS },
      )
      .toBe('taken');
    await set.close();
  });

  it('a holder whose lock was taken over stops taking events', async () => {
    const dir = freshDir();
    const set = await openWalSet(dir, BUILT_IN_SOURCE_SET);
    const lock = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as LockRecord;
    await set.wals.edgeLogs.append(Buffer.from('{"id":"a"}\n'));
    // What a newcomer that judged the lease stale writes.
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ ...lock, token: 'newcomer' }));
    await expect
      .poll(
        () =>
          set.wals.edgeLogs.append(Buffer.from('{"id":"b"}\n')).then(
            () => 'taken',
            (e: Error) => e.message,
          ),
        { timeout: HANG_MS },
      )
      .toMatch(/Another process took this data dir over/);
    await set.close();
    // Not ours any more: the newcomer's lock stays.
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toContain('newcomer');
  });

  it('a holder that released its lock as it stops says so, not that it was taken over', async () => {
    const set = await openWalSet(freshDir(), BUILT_IN_SOURCE_SET);
    const wal = set.wals.edgeLogs;
    await set.close();
    await expect(wal.append(Buffer.from('{"id":"late"}\n'))).rejects.toMatchObject({ code: 'closed', message: expect.stringMatching(/^This process is stopping/) });
  });
});

describe('every command that writes a data dir takes its lock', () => {
  // --kill-child: the server dies with the unshare process the test kills.
  const PID_NAMESPACE = ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child'];
  const serve = (dataDir: string) => spawnCli(['serve', '--data-dir', dataDir, '--api-key', 'k', '--port', '0'], {}, [], PID_NAMESPACE);

  it('two servers each running as pid 1 in its own PID namespace: the second is refused, the first keeps serving', async () => {
    const dataDir = freshDir();
    const first = serve(dataDir);
    const [, url] = await waitForStdout(first, /Listening on (http:\/\/\S+)/);
    const second = serve(dataDir);
    const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
    expect(code).toBe(1);
    expect(second.output.stderr).toMatch(/error \[data_dir_locked\]: The data dir .+ is in use by process 1 on host /);
    const post = await fetch(`${url}/api/logs?source_name=cloudflare.logs.prod`, {
      method: 'POST',
      headers: { 'X-API-KEY': 'k' },
      body: JSON.stringify({ message: 'still the one writer', project: 'abc', timestamp: '2026-11-21T10:00:00Z' }),
    });
    expect(post.status).toBe(200);
    // Killed (a crash, an OOM kill): a new one in yet another namespace takes the data dir at once.
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    const third = serve(dataDir);
    await waitForStdout(third, /Listening on/);
    third.kill('SIGKILL');
  });

  it('compact --delete-source over a live data dir is refused, and touches nothing', async () => {
    const dataDir = freshDir();
    const server = serve(dataDir);
    const [, url] = await waitForStdout(server, /Listening on (http:\/\/\S+)/);
    const post = await fetch(`${url}/api/logs?source_name=cloudflare.logs.prod`, {
      method: 'POST',
      headers: { 'X-API-KEY': 'k' },
      body: JSON.stringify({ message: 'acknowledged', project: 'abc', timestamp: '2026-11-21T10:00:00Z' }),
    });
    expect(post.status).toBe(200);
    const wal = join(dataDir, 'edgeLogs', 'wal');
    const before = readdirSync(wal);
    const refused = await runCli(['compact', '--source', 'edge', '--input', join(wal, '*.ndjson'), '--out', tmp.path('elsewhere'), '--delete-source']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/The data dir .+ is in use by process \d+ .*compact would race it/);
    expect(readdirSync(wal)).toEqual(before);
    expect(existsSync(tmp.path('elsewhere'))).toBe(false);
    // Its dataset as --out is refused the same way.
    const out = await runCli(['compact', '--source', 'edge', '--input', tmp.path('none', '*.ndjson'), '--out', join(dataDir, 'edgeLogs', 'parquet')]);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/is in use by process/);
    server.kill('SIGKILL');
  });
});
