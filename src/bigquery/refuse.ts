import { InvalidSqlError, type SandboxRule } from '../errors';

/**
 * Refuses a caller's BigQuery SQL: `400 invalid_sql` with the rule it breaks and a message naming
 * the construct. Never echoes more of the caller's text than a name.
 *
 * @example
 * refuse('function', "BigQuery's ARRAY_AGG is not supported here.");
 */
export function refuse(rule: SandboxRule, message: string): never {
  throw new InvalidSqlError(rule, message);
}

/** A name from the caller's text, safe to quote in a message (short, printable).  *
 * @example
 * shown('a\u0000b'); // 'a?b'
 */
export function shown(name: string): string {
  const clean = name.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 60 ? `${clean.slice(0, 60)}…` : clean;
}
