import type { ColumnType } from '../sql/column-types';

export type { ColumnType };

/** A result column as data (`ep.definitions`, OpenAPI, Arrow, CSV, the dashboard). */
export interface ColumnSpec {
  readonly name: string;
  readonly type: ColumnType;
  readonly description: string;
  /** Whether the value may be null (the row type says `| null`). */
  readonly nullable?: boolean;
}

/**
 * A column as declared in `defineEndpoint({ columns })`: its type, or the type with a
 * description and whether it may be null.
 *
 * @example
 * const columns = { path: 'text', errors: 'integer', p95: { type: 'float', nullable: true, description: 'ms' } } satisfies Record<string, ColumnDeclaration>;
 */
export type ColumnDeclaration = ColumnType | { readonly type: ColumnType; readonly nullable?: boolean; readonly description?: string };

/** The value a column of this type holds in a result row. */
export interface ColumnValues {
  timestamp: string;
  integer: number;
  float: number;
  text: string;
  json: Record<string, unknown>;
  boolean: boolean;
}

type ValueOf<C> = C extends ColumnType
  ? ColumnValues[C]
  : C extends { type: infer T extends ColumnType; nullable: true }
    ? ColumnValues[T] | null
    : C extends { type: infer T extends ColumnType }
      ? ColumnValues[T]
      : never;

/** The row type of declared columns. */
export type RowOf<C extends Record<string, ColumnDeclaration>> = { -readonly [K in keyof C]: ValueOf<C[K]> } & {};

const TYPES: readonly ColumnType[] = ['timestamp', 'integer', 'float', 'text', 'json', 'boolean'];

/** The columns as data, in declaration order; a type that is not a column type is an error (returned as text). */
export function columnSpecs(columns: Record<string, ColumnDeclaration>): ColumnSpec[] | string {
  const out: ColumnSpec[] = [];
  for (const [name, declared] of Object.entries(columns ?? {})) {
    const d = typeof declared === 'string' ? { type: declared } : declared;
    if (!d || !TYPES.includes(d.type)) return `column "${name}" has no type among ${TYPES.join(', ')}`;
    out.push(Object.freeze({ name, type: d.type, description: ('description' in d && d.description) || '', ...('nullable' in d && d.nullable ? { nullable: true } : {}) }));
  }
  if (!out.length) return 'it declares no columns';
  return out;
}
