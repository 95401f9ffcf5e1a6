/**
 * Quotes configuration text (file paths) for SQL. Only configuration ever enters SQL text this
 * way; request parameters are always bound to prepared statements.
 */
export function sqlString(text: string): string {
  if (text.includes('\0')) throw new TypeError('A path cannot contain a NUL character.');
  return `'${text.replaceAll("'", "''")}'`;
}

/** A SQL list literal of quoted strings. */
export function sqlStringList(texts: readonly string[]): string {
  return `[${texts.map(sqlString).join(', ')}]`;
}
