import { RESERVED_PREFIX, type Expr, type Kind, type UnnestAlias } from './ir';
import type { TypedJson } from './schema';
import { refuse, shown } from './refuse';

/** A range of a FROM clause: a table, a CTE or a subquery, with its unnest aliases. */
export interface Range {
  /** The name the query refers to it by (lower case): its alias, else the table's name. */
  name: string;
  /** Column name (lower case) -> kind, in order. */
  columns: Map<string, Kind>;
  /** Known field paths inside JSON columns (for bare names). */
  fields: Readonly<Record<string, readonly string[]>>;
  /** By JSON column: its fields held as columns of their own (a source table's typed fields). */
  typed?: Readonly<Record<string, TypedJson>>;
  unnests: UnnestAlias[];
}

/** An unnest alias: `cross join unnest(m.request) as request`. */
export interface UnnestVariable {
  name: string;
  range: Range;
  alias: UnnestAlias;
}

/**
 * The names a query's expressions see, as BigQuery resolves them: a range variable first (an
 * unnest alias, then a table's alias or name), else a column; a bare name that is no column of a
 * range may be a field of exactly one unnest alias whose known fields have it. Enclosing queries'
 * names are seen by subqueries. An unknown or ambiguous name is refused, never guessed.
 *
 * @example
 * scope.resolve(['request', 'path']); // { t: 'field', rel: 'edge_logs', column: 'metadata', unnest: <request>, path: ['path'] }
 */
export class Scope {
  readonly ranges: Range[] = [];
  readonly unnests: UnnestVariable[] = [];

  constructor(readonly parent: Scope | null) {}

  addRange(range: Range): void {
    if (this.ranges.some((r) => r.name === range.name) || this.unnests.some((u) => u.name === range.name)) {
      refuse('query', `Duplicate alias ${shown(range.name)} in FROM: give each table its own alias.`);
    }
    this.ranges.push(range);
  }

  addUnnest(variable: UnnestVariable): void {
    if (this.ranges.some((r) => r.name === variable.name) || this.unnests.some((u) => u.name === variable.name)) {
      // `cross join unnest(metadata) as metadata` is fine: the alias then hides the column, as in BigQuery.
      refuse('query', `Duplicate alias ${shown(variable.name)} in FROM: give each UNNEST its own alias.`);
    }
    this.unnests.push(variable);
  }

  /** A path expression (`a`, `t.col`, `alias.field.sub`) as a value. */
  resolve(parts: readonly string[]): Expr {
    const head = parts[0]!.toLowerCase();
    const rest = parts.slice(1);
    for (let scope: Scope | null = this; scope; scope = scope.parent) {
      const unnest = scope.unnests.find((u) => u.name === head);
      if (unnest) return fieldOf(unnest, rest);
      const range = scope.ranges.find((r) => r.name === head);
      if (range) {
        if (rest.length === 0) refuse('construct', `A whole row (${shown(head)}) cannot be used as a value: name a column (${shown(head)}.id) or select ${shown(head)}.*.`);
        return columnOf(range, rest[0]!, rest.slice(1));
      }
      const candidates = [
        ...scope.ranges.filter((r) => r.columns.has(head)).map((r) => () => columnOf(r, head, rest)),
        ...scope.unnests.filter((u) => exposes(u, parts[0]!)).map((u) => () => fieldOf(u, parts)),
      ];
      const names = [
        ...scope.ranges.filter((r) => r.columns.has(head)).map((r) => `${r.name}.${head}`),
        ...scope.unnests.filter((u) => exposes(u, parts[0]!)).map((u) => (u.name.startsWith(RESERVED_PREFIX) ? `the ${parts[0]} of an UNNEST without alias` : `${u.name}.${parts[0]}`)),
      ];
      if (candidates.length > 1) refuse('query', `Column name ${shown(parts[0]!)} is ambiguous: it could be ${names.map(shown).join(' or ')}; qualify it.`);
      if (candidates.length === 1) return candidates[0]!();
    }
    return refuse('query', `Unrecognized name: ${shown(parts[0]!)}${this.hint(shown(parts[0]!))}.`);
  }

  /** How a field of that name would be read here: through an unnest alias in sight, or one to add over a JSON column. */
  private hint(name: string): string {
    for (let scope: Scope | null = this; scope; scope = scope.parent) {
      const alias = scope.unnests.find((u) => !u.name.startsWith(RESERVED_PREFIX));
      if (alias) return ` (a JSON field is read through its unnest alias: ${shown(alias.name)}.${name})`;
    }
    for (let scope: Scope | null = this; scope; scope = scope.parent) {
      for (const range of scope.ranges) {
        const column = [...range.columns].find(([, kind]) => kind === 'json')?.[0];
        if (column) return ` (a field of ${shown(column)} is read through an unnest alias: cross join unnest(${shown(column)}) as m, then m.${name})`;
      }
    }
    return '';
  }
}

function columnOf(range: Range, name: string, path: readonly string[]): Expr {
  const column = name.toLowerCase();
  const kind = range.columns.get(column);
  if (kind === undefined) return refuse('query', `Name ${shown(name)} not found inside ${shown(range.name)}.`);
  if (path.length === 0) return { t: 'col', rel: range.name, name: column, kind };
  if (kind !== 'json') refuse('query', `Cannot access field ${shown(path[0]!)} on a value of ${shown(range.name)}.${shown(column)}, which is not JSON.`);
  return { t: 'field', rel: range.name, column, unnest: null, path: checkedPath(path), ...typedOf(range, column) };
}

function fieldOf(unnest: UnnestVariable, path: readonly string[]): Expr {
  return { t: 'field', rel: unnest.range.name, column: unnest.alias.column, unnest: unnest.alias, path: checkedPath(path), ...typedOf(unnest.range, unnest.alias.column) };
}

function typedOf(range: Range, column: string): { typed?: TypedJson } {
  const typed = range.typed?.[column];
  return typed ? { typed } : {};
}

/** Whether the known fields of the alias's column have `name` right under the alias's path. */
function exposes(unnest: UnnestVariable, name: string): boolean {
  const known = unnest.range.fields[unnest.alias.column] ?? [];
  const prefix = unnest.alias.path;
  return known.some((dotted) => {
    const parts = dotted.split('.');
    return parts.length > prefix.length && prefix.every((p, i) => parts[i] === p) && parts[prefix.length] === name;
  });
}

/** Field names become JSON path keys: any text but quotes, backslashes and control characters.  *
 * @example
 * checkedPath(['request', 'path']); // ['request', 'path']
 */
export function checkedPath(path: readonly string[]): string[] {
  for (const key of path) {
    if (key === '' || /["\\\x00-\x1f\x7f]/.test(key) || key.length > 200) refuse('query', `The field name ${shown(key)} cannot be read (no quotes, backslashes or control characters).`);
  }
  return [...path];
}
