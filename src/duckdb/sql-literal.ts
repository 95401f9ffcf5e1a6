import { InternalError } from '../util/internal-error';
/**
 * Quotes configuration text (file paths) for SQL. Only configuration ever enters SQL text this
 * way; request parameters are always bound to prepared statements.
 */
export function sqlString(text: string): string {
  // The file system refuses such a path before it gets here (no file name holds a NUL).
  if (text.includes('\0')) throw new InternalError('invariant', 'A path cannot contain a NUL character.');
  return `'${text.replaceAll("'", "''")}'`;
}

/** A SQL list literal of quoted strings. */
export function sqlStringList(texts: readonly string[]): string {
  return `[${texts.map(sqlString).join(', ')}]`;
}
