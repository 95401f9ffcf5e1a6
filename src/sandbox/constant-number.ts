import { UNIT_MICROS } from '../time/units';

/** A node of DuckDB's parse tree (json_serialize_sql). */
type Json = Record<string, any>;

/** A month as its shortest, so a count of them is never under-estimated. */
const MONTH = 28 * UNIT_MICROS.day;

/** The words of an interval's text (`'90 minutes'`), in microseconds. */
const INTERVAL_WORD: Record<string, number> = { ...UNIT_MICROS, month: MONTH, year: 12 * MONTH };

/** The `to_<unit>s(n)` functions (`to_hours(2)`), in microseconds. */
const TO_UNIT: Record<string, number> = {
  ...Object.fromEntries(Object.entries(UNIT_MICROS).map(([unit, micros]) => [`to_${unit}s`, micros])),
  to_months: MONTH,
  to_quarters: 3 * MONTH,
  to_years: 12 * MONTH,
  to_decades: 120 * MONTH,
  to_centuries: 1200 * MONTH,
  to_millennia: 12_000 * MONTH,
};

/**
 * The value of a constant argument of a caller's SQL as a number (times and intervals in
 * microseconds; a month as its shortest, 28 days, so counts are never under-estimated), or null
 * when it is not a constant: what the size check of `range`, `repeat`, `lpad`, ... reads.
 *
 * @example
 * constantNumber(tree.statements[0].node.select_list[0]); // 1e9 for `select 1000 * 1000 * 1000`
 */
export function constantNumber(node: Json): number | null {
  switch (node?.class) {
    case 'CONSTANT': {
      const v = node.value?.value;
      if (typeof v === 'number') return node.value.type?.type_info?.scale ? v / 10 ** node.value.type.type_info.scale : v;
      if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
      return null;
    }
    case 'CAST': {
      const target = String(node.cast_type?.id);
      const text = node.child?.class === 'CONSTANT' ? node.child.value?.value : undefined;
      if (typeof text === 'string' && /^(TIMESTAMP|DATE)/.test(target)) {
        const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text.replace(' ', 'T')}Z`);
        return Number.isFinite(ms) ? ms * 1000 : null;
      }
      if (typeof text === 'string' && target === 'INTERVAL') return intervalMicros(text);
      return constantNumber(node.child);
    }
    case 'FUNCTION': {
      const name = String(node.function_name).toLowerCase();
      const values = (node.children ?? []).map((c: Json) => constantNumber(c));
      if (values.some((v: number | null) => v === null)) return null;
      const [a, b] = values as number[];
      if (TO_UNIT[name] !== undefined && values.length === 1) return a! * TO_UNIT[name]!;
      if (name === 'trunc' && values.length === 1) return Math.trunc(a!);
      if (values.length === 1 && name === '-') return -a!;
      if (values.length !== 2) return null;
      const ops: Record<string, (x: number, y: number) => number> = {
        '+': (x, y) => x + y,
        '-': (x, y) => x - y,
        '*': (x, y) => x * y,
        '/': (x, y) => x / y,
        '//': (x, y) => Math.floor(x / y),
        '**': (x, y) => x ** y,
        '^': (x, y) => x ** y,
      };
      return ops[name] ? ops[name]!(a!, b!) : null;
    }
    default:
      return null;
  }
}

function intervalMicros(text: string): number | null {
  const parts = [...text.toLowerCase().matchAll(/(-?\d+(?:\.\d+)?)\s*([a-z]+?)s?\b/g)];
  if (!parts.length) return null;
  let total = 0;
  for (const [, n, unit] of parts) {
    const micros = INTERVAL_WORD[unit!];
    if (micros === undefined) return null;
    total += Number(n) * micros;
  }
  return total;
}
