import type { Node } from './parse-bigquery';
import { refuse } from './refuse';

/**
 * The one key of a serialized enum value of sqlparser-rs (`{ BinaryOp: {...} }`), or a variant
 * written as a bare string (`"Wildcard"`).
 *
 * @example
 * variantOf({ Nested: { Identifier: { value: 'a' } } }); // ['Nested', { Identifier: ... }]
 */
export function variantOf(node: unknown): [string, unknown] {
  if (typeof node === 'string') return [node, null];
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return refuse('construct', 'The query has a part the translator does not know.');
  const keys = Object.keys(node);
  if (keys.length !== 1) return refuse('construct', 'The query has a part the translator does not know.');
  return [keys[0]!, (node as Node)[keys[0]!]];
}

/** A variant's name as a message shows it (`InUnnest` -> `BigQuery's IN UNNEST`).  *
 * @example
 * constructName('InUnnest'); // "BigQuery's IN UNNEST"
 */
export function constructName(variant: string): string {
  const words = variant.replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase();
  return /^[A-Z ]{1,40}$/.test(words) ? `BigQuery's ${words}` : 'This construct';
}

/** Whether a node's optional part is absent (null, false, empty list, `None`).  *
 * @example
 * absent([]); // true
 */
export function absent(value: unknown): boolean {
  return value === null || value === undefined || value === false || value === 'None' || (Array.isArray(value) && value.length === 0);
}

/** Refuses a clause the translator does not support when the caller wrote it.  *
 * @example
 * refuseIfPresent(select, ['qualify'], (k) => k.toUpperCase()); // throws when the SELECT has QUALIFY
 */
export function refuseIfPresent(node: Node, keys: readonly string[], what: (key: string) => string): void {
  for (const key of keys) if (!absent(node[key])) refuse('construct', `${what(key)} is not supported here.`);
}
