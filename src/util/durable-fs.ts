import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, open, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Flushes a file's data to disk. */
export async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Flushes a folder's entries (a created, renamed or deleted file) to disk: without it a file
 * fsynced after its creation may still be missing after a power loss. A no-op where folders
 * cannot be opened or synced (Windows, some file systems: their renames are durable otherwise).
 */
export async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, constants.O_RDONLY);
  } catch (error) {
    if (isCode(error, 'EISDIR') || isCode(error, 'EPERM') || isCode(error, 'EACCES')) return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    if (!isCode(error, 'EINVAL') && !isCode(error, 'EBADF') && !isCode(error, 'EPERM')) throw error;
  } finally {
    await handle.close();
  }
}

/** Whether an error carries this `code` (`ENOENT`, ...). */
export function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

/**
 * Writes a file so that it appears whole or not at all, durably: a temporary name beside it,
 * fsync, then a rename (`replace`) or a link that fails when the name exists (`create`), then the
 * folder's fsync. With `create`, resolves false when the name was taken by someone else.
 * `permissions` are the file's from its first byte (0o600 for secrets: never readable by others,
 * not even for an instant); the default is the process's umask.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode: 'replace' | 'create', permissions?: number): Promise<boolean> {
  // Random, not the pid: two containers' processes are often both pid 1.
  const temp = `${dirname(path)}/.${path.slice(dirname(path).length + 1)}.${randomBytes(8).toString('hex')}.tmp`;
  await writeFile(temp, data, permissions === undefined ? undefined : { mode: permissions });
  try {
    await fsyncFile(temp);
    if (mode === 'replace') {
      await rename(temp, path);
    } else {
      try {
        await link(temp, path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw error;
      }
    }
    await fsyncDir(dirname(path));
    return true;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** Deletes a file; one that is already gone is fine. */
export async function unlinkIfPresent(path: string): Promise<void> {
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}
