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

/** Flushes a folder's entries (new, renamed, deleted names) to disk. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY);
  try {
    await handle.sync();
  } catch (error) {
    // Some file systems refuse fsync on a folder; their rename is durable by other means.
    if ((error as NodeJS.ErrnoException).code !== 'EINVAL' && (error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
  } finally {
    await handle.close();
  }
}

/**
 * Writes a file so that it appears whole or not at all, durably: a temporary name beside it,
 * fsync, then a rename (`replace`) or a link that fails when the name exists (`create`), then the
 * folder's fsync. With `create`, resolves false when the name was taken by someone else.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode: 'replace' | 'create'): Promise<boolean> {
  const temp = `${dirname(path)}/.${path.slice(dirname(path).length + 1)}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temp, data);
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
