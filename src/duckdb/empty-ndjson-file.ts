import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let path: string | null = null;

/** The file's name in its folder. */
const FILE = 'empty.ndjson';

/**
 * An empty NDJSON file, made once per process. DuckDB 1.5 reads the first line of a file that
 * starts with a UTF-8 byte order mark as broken when that file is the only one in
 * `read_json_objects`; with a second file in the list it strips the mark. So every NDJSON read
 * lists this file too: it adds no row and costs one empty read.
 *
 * It lives in one folder per user, `log-endpoints-<uid>` in the temporary folder, shared by that
 * user's processes and left in place: a folder made per process and removed at `exit` stayed
 * behind whenever the process was killed by a signal it did not handle (a host's server, a test
 * runner's workers: hundreds a day). The shared folder is used only where it is the user's own
 * and nobody else's to write (a directory, not a link, mode 0700); otherwise, and where a
 * platform has no user ids, a folder of the process's own is made and removed at exit.
 */
export function emptyNdjsonFile(): string {
  // Made again when gone: a cleaner of the temporary folder (systemd-tmpfiles removes what was not
  // used for days) would otherwise fail every NDJSON read of a long-running process.
  if (path !== null && existsSync(path)) return path;
  return (path = sharedEmptyFile() ?? ownEmptyFile());
}

/** The file in the user's shared folder, or null where that folder is not safely the user's alone. */
function sharedEmptyFile(): string | null {
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  const dir = join(tmpdir(), `log-endpoints-${uid}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return null;
  }
  try {
    const folder = lstatSync(dir);
    // Anyone else able to write the folder could put rows into every NDJSON read.
    if (!folder.isDirectory() || folder.uid !== uid || (folder.mode & 0o077) !== 0) return null;
    const file = join(dir, FILE);
    // Truncating an empty file another process reads changes nothing it reads.
    writeFileSync(file, '');
    const made = lstatSync(file);
    return made.isFile() && made.size === 0 ? file : null;
  } catch {
    return null;
  }
}

/** The file in a folder of this process's own, removed when it exits. */
function ownEmptyFile(): string {
  // A prefix of its own: never the shared folder's name, whatever the random part.
  const dir = mkdtempSync(join(tmpdir(), 'log-endpoints-own-'));
  const file = join(dir, FILE);
  writeFileSync(file, '');
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return file;
}
