import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Codes of a folder that cannot be written: permissions, a read-only mount. */
const NOT_WRITABLE = new Set(['EACCES', 'EPERM', 'EROFS']);

/**
 * Creates a data dir (and its parents) when missing. Null when it can be used, otherwise what is
 * in the way, in words the caller puts after its own option name (`storage.dataDir`,
 * `--data-dir`): the system's own "EEXIST" or "ENOENT ... mkdir" names neither the option nor the
 * problem.
 *
 * @example
 * prepareDataDir('/etc/hostname');   // "'/etc/hostname' is a file, not a folder"
 * prepareDataDir('/mnt/ro/data');    // "'/mnt/ro/data' cannot be created: '/mnt/ro' is not writable (EROFS)"
 */
export function prepareDataDir(dataDir: string): string | null {
  const dir = resolve(dataDir);
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    return null;
  } catch (error) {
    return whyNot(dir, error as NodeJS.ErrnoException);
  }
}

function whyNot(dir: string, error: NodeJS.ErrnoException): string {
  const code = error.code ?? 'error';
  // The deepest part of the path that exists says what is wrong.
  let existing = dir;
  while (statOrNull(existing) === null && dirname(existing) !== existing) existing = dirname(existing);
  const stats = statOrNull(existing);
  if (stats && !stats.isDirectory()) {
    return existing === dir ? `'${dir}' is a file, not a folder` : `'${dir}' cannot be created: '${existing}' is a file, not a folder`;
  }
  if (existing === dir) return NOT_WRITABLE.has(code) ? `'${dir}' is not writable (${code})` : `'${dir}' cannot be used (${error.message})`;
  // A parent that exists but refuses the new folder; ENOENT there too on some systems.
  if (NOT_WRITABLE.has(code) || code === 'ENOENT') return `'${dir}' cannot be created: '${existing}' is not writable (${code})`;
  return `'${dir}' cannot be created (${error.message})`;
}

function statOrNull(path: string) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
