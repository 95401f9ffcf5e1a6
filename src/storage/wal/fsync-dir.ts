import { open } from 'node:fs/promises';

/**
 * Makes a directory's entries durable (a created, renamed or deleted file): without it a file
 * fsynced after its creation may still be missing after a power loss. A no-op where directories
 * cannot be opened (Windows).
 */
export async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
  } catch (error) {
    if (isCode(error, 'EISDIR') || isCode(error, 'EPERM') || isCode(error, 'EACCES')) return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    // Some filesystems refuse fsync on a directory; there is nothing more to do there.
    if (!isCode(error, 'EINVAL') && !isCode(error, 'EBADF') && !isCode(error, 'EPERM')) throw error;
  } finally {
    await handle.close();
  }
}

export function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}
