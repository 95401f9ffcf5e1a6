/**
 * What a caller's SELECT reads of the tables it may read, told from DuckDB's parse tree of it (the
 * tree the sandbox checked: `json_serialize_sql`), so that an engine may give those tables only the
 * columns it names (docs/sandboxing.md, "Source tables"). Read from the tree, not the text: a rule
 * over the text has to guess what a word is (a column, an alias, a string, a quoted name), and
 * every guess it gets wrong drops a column the query reads, which changes an answer silently.
 */
export interface TableReads {
  /** Every part of every column reference and `USING` column, lower-cased (`t.metadata.x`: `t`, `metadata`, `x`). */
  readonly names: ReadonlySet<string>;
  /**
   * Tables (lower-cased) read in a way that may reach a column without naming it: used as a value
   * (`SELECT e FROM edge_logs e` gives the row as a struct), given column aliases (`edge_logs e(a)`
   * renames columns by position), in a natural join, or by a positional reference (`#2`).
   */
  readonly whole: ReadonlySet<string>;
  /**
   * Tables (lower-cased) a `*` selects from (`*`, `t.*`, `COLUMNS(...)`, `FROM t` alone): a `*` in a
   * SELECT whose FROM holds the table itself, not through a subquery.
   */
  readonly starred: ReadonlySet<string>;
}

type Node = Record<string, unknown>;

/**
 * What `statement` (a parse tree's statement, `{ node, ... }`, one the sandbox accepted) reads of
 * `tables`. Every reference counts wherever it is: a name that is not the table's column (an
 * alias, a lambda's argument, another table's column) only ever keeps a column more.
 *
 * @example
 * tableReads(tree.statements[0], ['edge_logs']);
 * // select id from edge_logs e where e.project = 'a' -> { names: Set { 'id', 'e', 'project' }, whole: Set {}, starred: Set {} }
 */
export function tableReads(statement: unknown, tables: readonly string[]): TableReads {
  const relations = new Set(tables.map((t) => t.toLowerCase()));
  // Each table's names as a value: its own, and the aliases FROM gives it (a name may be several's).
  const valueOf = new Map<string, Set<string>>([...relations].map((r) => [r, new Set([r])]));
  const reads = { names: new Set<string>(), whole: new Set<string>(), starred: new Set<string>() };
  const bases: string[] = [];
  eachNode(statement, (node) => {
    if (node.type !== 'BASE_TABLE') return;
    const relation = String(node.table_name).toLowerCase();
    if (!relations.has(relation)) return;
    bases.push(relation);
    const alias = typeof node.alias === 'string' ? node.alias.toLowerCase() : '';
    if (alias !== '') valueOf.set(alias, new Set([...(valueOf.get(alias) ?? []), relation]));
    if (Array.isArray(node.column_name_alias) && node.column_name_alias.length > 0) reads.whole.add(relation);
  });
  visit(statement, [], { ...reads, relations, valueOf, bases });
  return reads;
}

interface Walk {
  names: Set<string>;
  whole: Set<string>;
  starred: Set<string>;
  relations: ReadonlySet<string>;
  valueOf: ReadonlyMap<string, ReadonlySet<string>>;
  bases: readonly string[];
}

/** Walks a part of the tree; `from` is the tables of the nearest enclosing SELECT's own FROM. */
function visit(value: unknown, from: readonly string[], walk: Walk): void {
  if (Array.isArray(value)) {
    for (const v of value) visit(v, from, walk);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const node = value as Node;
  if (node.type === 'SELECT_NODE') from = tablesOf(node.from_table, walk);
  if (node.class === 'COLUMN_REF') {
    const parts = (node.column_names as string[]).map((p) => p.toLowerCase());
    for (const part of parts) walk.names.add(part);
    if (parts.length === 1) for (const table of walk.valueOf.get(parts[0]!) ?? []) walk.whole.add(table);
  } else if (node.class === 'STAR') {
    for (const table of from) walk.starred.add(table);
  } else if (node.class === 'POSITIONAL_REFERENCE') {
    for (const table of walk.bases) walk.whole.add(table);
  } else if (node.type === 'JOIN') {
    for (const name of (node.using_columns as string[] | undefined) ?? []) walk.names.add(name.toLowerCase());
    if (node.ref_type === 'NATURAL') for (const table of tablesOf(node, walk)) walk.whole.add(table);
  }
  for (const v of Object.values(node)) visit(v, from, walk);
}

/** The tables among the walk's that a FROM item holds itself: its base tables and its joins', not its subqueries'. */
function tablesOf(from: unknown, walk: Walk): string[] {
  const ref = from as Node | null | undefined;
  if (ref?.type === 'BASE_TABLE') {
    const relation = String(ref.table_name).toLowerCase();
    return walk.relations.has(relation) ? [relation] : [];
  }
  if (ref?.type === 'JOIN') return [...tablesOf(ref.left, walk), ...tablesOf(ref.right, walk)];
  return [];
}

/** Calls `f` on every node of a part of the tree. */
function eachNode(value: unknown, f: (node: Node) => void): void {
  if (Array.isArray(value)) {
    for (const v of value) eachNode(v, f);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  f(value as Node);
  for (const v of Object.values(value as Node)) eachNode(v, f);
}

/**
 * The reads of several texts run as one query (a translated SELECT and its form without the
 * arrays half: an engine runs either): every name, and every table read whole or by `*`, of any.
 */
export function mergeTableReads(all: readonly TableReads[]): TableReads {
  return {
    names: new Set(all.flatMap((r) => [...r.names])),
    whole: new Set(all.flatMap((r) => [...r.whole])),
    starred: new Set(all.flatMap((r) => [...r.starred])),
  };
}
