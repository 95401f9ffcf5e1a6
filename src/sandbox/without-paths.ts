/**
 * A message with every file path in it replaced: the paths given (longest first) by `instead`,
 * and anything else that looks like an absolute path by "a path". Refusals quote DuckDB's
 * messages, which may quote the caller's text or the log files' names; answers never hold paths.
 *
 * @example
 * withoutPaths("Could not convert string '/srv/logs/a.ndjson' to INT32"); // "Could not convert string 'a path' to INT32"
 */
export function withoutPaths(message: string, paths: readonly string[] = [], instead = 'a log file'): string {
  let out = message;
  for (const path of [...paths].sort((a, b) => b.length - a.length)) out = out.replaceAll(path, instead);
  return out.replace(/(?<![\w.:/])(?:[A-Za-z]:)?[\\/](?:[^\s'"\\/]+[\\/])+[^\s'"]*/g, 'a path');
}
