import type { ParserOutput } from '../sandbox/validate-caller-sql';

/** A node of DuckDB's parse tree (`json_serialize_sql`), read field by field. */
export type Node = Record<string, unknown>;

/**
 * The one statement's root node of a parse, or null when the text failed to parse or holds
 * anything but one statement.
 *
 * @example
 * statementNode({ json: await neutralSqlParser.serialize('SELECT 1') })?.type; // 'SELECT_NODE'
 */
export function statementNode(parsed: ParserOutput): Node | null {
  if ('failed' in parsed) return null;
  const tree = JSON.parse(parsed.json) as { error?: boolean; statements?: Array<{ node?: Node }> };
  if (tree.error || tree.statements?.length !== 1) return null;
  return tree.statements[0]!.node ?? null;
}

/** A part of the tree that is there (the parser writes null for an absent one). */
export function present(part: unknown): boolean {
  return part !== null && part !== undefined;
}

/** An absent or empty list of the tree. */
export function isEmpty(list: unknown): boolean {
  return list === undefined || (Array.isArray(list) && list.length === 0);
}

/** Whether a part of the tree holds a subquery (which reads its table whole). */
export function holdsSubquery(value: unknown): boolean {
  return holds(value, (node) => node.class === 'SUBQUERY' || node.type === 'SUBQUERY');
}

/** Whether a part of the tree holds a node `test` accepts. */
export function holds(value: unknown, test: (node: Node) => boolean): boolean {
  if (Array.isArray(value)) return value.some((v) => holds(v, test));
  if (value === null || typeof value !== 'object') return false;
  const node = value as Node;
  return test(node) || Object.values(node).some((v) => holds(v, test));
}

/** Whether a SELECT's list is a bare `*` (no EXCLUDE, REPLACE, RENAME, COLUMNS). */
export function selectsStar(node: Node): boolean {
  const select = node.select_list as Node[] | undefined;
  if (select?.length !== 1) return false;
  const [star] = select;
  return star!.class === 'STAR' && !present(star!.expr) && star!.columns === false && ['exclude_list', 'replace_list', 'qualified_exclude_list', 'rename_list'].every((k) => isEmpty(star![k]));
}

/** The column a reference names (its last part: `t.timestamp` is `timestamp`), or null for anything else. */
export function columnName(node: unknown): string | null {
  const ref = node as Node | null | undefined;
  if (ref?.class !== 'COLUMN_REF') return null;
  const names = ref.column_names as string[];
  return names.length <= 2 ? names.at(-1)! : null;
}
