import type { ColumnType } from '../sql/column-types';
import { parseIsoMicros } from '../time/iso';
import type { Expr, Kind, QueryIR } from './ir';
import { refuse } from './refuse';

/**
 * The kind of a translated value. A JSON value (a field read from `metadata`) has no fixed kind:
 * it takes the one its use asks for (`kindFor`), as its JSON type decides: a number compares as a
 * number, a string as text.
 *
 * @example
 * kindOf({ t: 'lit', kind: 'integer', value: '1' }); // 'integer'
 */
export function kindOf(e: Expr): Kind {
  switch (e.t) {
    case 'lit':
      return e.kind;
    case 'ts':
    case 'now':
      return 'timestamp';
    case 'interval':
      return 'interval';
    case 'field':
      return 'json';
    case 'conv':
      return e.to;
    case 'cast':
      return e.to;
    case 'in':
    case 'in_query':
    case 'exists':
    case 'between':
      return 'boolean';
    case 'col':
    case 'call':
    case 'op':
    case 'case':
    case 'agg':
    case 'subquery':
    case 'pos':
      return e.kind;
  }
}

const NAMES: Record<Kind, string> = {
  text: 'STRING',
  integer: 'INT64',
  float: 'FLOAT64',
  boolean: 'BOOL',
  timestamp: 'TIMESTAMP',
  json: 'JSON',
  null: 'NULL',
  interval: 'INTERVAL',
};

/** BigQuery's name of a kind, for messages.  *
 * @example
 * kindName('integer'); // 'INT64'
 */
export function kindName(kind: Kind): string {
  return NAMES[kind];
}

/**
 * A value as the kind a use asks for: JSON read as text, a number or a boolean; an integer as a
 * float; a string literal as a timestamp where a timestamp is compared (`t.timestamp > '2026-...Z'`).
 * Anything else is refused, as BigQuery refuses it (no matching signature).
 *
 * @example
 * asKind(field, 'float', 'BETWEEN'); // { t: 'conv', to: 'float', arg: field }
 */
export function asKind(e: Expr, want: Kind, where: string): Expr {
  const kind = kindOf(e);
  if (kind === want || kind === 'null' || want === 'json') return e;
  if (kind === 'integer' && want === 'float') return e;
  if (kind === 'json') {
    if (want === 'text' || want === 'float' || want === 'boolean') return { t: 'conv', to: want, arg: e };
    if (want === 'integer') return { t: 'conv', to: 'float', arg: e };
  }
  if (kind === 'text' && want === 'timestamp' && e.t === 'lit' && typeof e.value === 'string') return timestampLiteral(e.value);
  return refuse('query', `${where}: expected ${kindName(want)}, found ${kindName(kind)}.`);
}

/** A timestamp written as BigQuery reads one: `2026-11-20T10:00:00.000Z`, `2026-11-20 10:00:00+02`, `2026-11-20`, `... UTC`.  *
 * @example
 * timestampLiteral('2026-11-20T10:00:00Z'); // { t: 'ts', micros: 1795168800000000n }
 */
export function timestampLiteral(text: string): Expr {
  const micros = parseIsoMicros(text.replace(/\s*(UTC|\+00(:00)?)$/i, 'Z'));
  if (micros === null) refuse('query', `Could not read "${text.slice(0, 40)}" as a TIMESTAMP (write 2026-11-20T10:00:00Z).`);
  return { t: 'ts', micros };
}

/**
 * The one kind several values are compared or combined as: JSON takes the other side's kind
 * (text when both are JSON), integers widen to floats, a string literal beside a timestamp is one.
 *
 * @example
 * commonKind([{ t: 'field', ... }, { t: 'lit', kind: 'integer', value: '500' }], 'BETWEEN'); // 'float'
 */
export function commonKind(values: readonly Expr[], where: string): Kind {
  const kinds = values.map(kindOf).filter((k) => k !== 'null');
  if (kinds.length === 0) return 'null';
  const typed = kinds.filter((k) => k !== 'json');
  if (typed.length === 0) return 'json';
  let out: Kind = typed[0]!;
  for (const k of typed.slice(1)) {
    if (k === out) continue;
    if ((k === 'integer' && out === 'float') || (k === 'float' && out === 'integer')) out = 'float';
    else if (k === 'timestamp' && out === 'text' && values.every(isTextLiteralOr('timestamp'))) out = 'timestamp';
    else if (k === 'text' && out === 'timestamp' && values.every(isTextLiteralOr('timestamp'))) out = 'timestamp';
    else refuse('query', `${where}: ${kindName(out)} and ${kindName(k)} cannot be compared or combined.`);
  }
  // Two JSON values compare as text; JSON beside a number as numbers.
  return out === 'integer' && kinds.includes('json') ? 'float' : out;
}

function isTextLiteralOr(kind: Kind) {
  return (e: Expr) => kindOf(e) !== 'text' || (e.t === 'lit' && typeof e.value === 'string') || kindOf(e) === kind;
}

/** The kind of a value in a result: JSON stays JSON (a number a number, a string a string), NULL is text.  *
 * @example
 * outputKind('null'); // 'text'
 */
export function outputKind(kind: Kind): ColumnType {
  if (kind === 'null') return 'text';
  if (kind === 'interval') return refuse('construct', 'An INTERVAL cannot be a column of the result.');
  return kind;
}

/**
 * A query with one output column's value rewritten (`to` of its expression) and its kind set: how a
 * JSON field selected by the subquery of IN is read as text, or a bare NULL of one side of UNION
 * ALL takes the other side's kind. Refused where the query is a set operation itself.
 *
 * @example
 * retypedColumn(query, 0, (e) => asKind(e, 'text', 'IN'), 'text');
 */
export function retypedColumn(query: QueryIR, index: number, to: (e: Expr) => Expr, kind: ColumnType): QueryIR {
  if (query.body.t !== 'select') return refuse('query', 'A column of a nested UNION cannot be converted here: cast it in each SELECT (CAST(x AS STRING)).');
  const items = query.body.items.map((item, i) => (i === index ? { ...item, e: to(item.e) } : item));
  return { ...query, body: { ...query.body, items }, columns: query.columns.map((c, i) => (i === index ? { ...c, kind } : c)) };
}
