import type { ExprContext } from './context';
import { approxQuantile } from './functions';
import type { Expr } from './ir';
import type { Node } from './parse-bigquery';
import { refuse, shown } from './refuse';
import { checkedPath } from './scope';
import { variantOf } from './tree';

/** One array subscript: `[OFFSET(k)]`, `[SAFE_OFFSET(k)]`, `[ORDINAL(k)]`, `[SAFE_ORDINAL(k)]` or `[k]`, as a 0-based offset. */
interface Subscript {
  offset: number;
  safe: boolean;
}

/**
 * `x[OFFSET(k)]` and the rest of BigQuery's compound access (`a.b[OFFSET(0)].c`): one quantile,
 * `APPROX_QUANTILES(x, n)[OFFSET(k)]` (functions.ts), or one subscript of a JSON field, a
 * repeated record (`m.parsed[SAFE_OFFSET(0)].error_severity`, ir.ts `Element`). Any other
 * subscript is refused naming it.
 *
 * @example
 * compoundAccess(node /* approx_quantiles(x, 100)[offset(95)] *\/, ctx); // { t: 'agg', fn: 'quantile', at: { k: 95, n: 100, ... } }
 */
export function compoundAccess(v: Node, ctx: ExprContext): Expr {
  const chain = v.access_chain as unknown[];
  const [rootKind, root] = variantOf(v.root);
  const [firstKind, first] = variantOf(chain[0]);
  if (rootKind === 'Function' && chain.length === 1 && firstKind === 'Subscript') {
    const name = ((root as Node).name as Node[]).map((p) => String((variantOf(p)[1] as Node).value).toLowerCase()).join('.');
    if (name === 'approx_quantiles') return approxQuantile(root as Node, subscript(first), ctx);
  }
  const subscripts = chain.filter((c) => variantOf(c)[0] === 'Subscript');
  if (rootKind === 'Identifier' && subscripts.length === 1) return fieldElement(root as Node, chain, ctx);
  if (subscripts.length > 0) {
    return refuse(
      'construct',
      'An array subscript ([OFFSET(n)], [SAFE_OFFSET(n)], [ORDINAL(n)]) is supported here on APPROX_QUANTILES(x, n) and once on a JSON field (m.parsed[SAFE_OFFSET(0)].error_severity).',
    );
  }
  return refuse('construct', 'This field access is not supported here: read a JSON field by its path (m.request.path).');
}

/**
 * `m.parsed[SAFE_OFFSET(0)].error_severity`: the field before the subscript as a repeated record,
 * the keys after it read in its element (ir.ts, `Element`: an object is a repeated field of one
 * element). ORDINAL(0) is refused (BigQuery fails it whatever the array), SAFE_ORDINAL(0) is NULL.
 */
function fieldElement(root: Node, chain: unknown[], ctx: ExprContext): Expr {
  const at = chain.findIndex((c) => variantOf(c)[0] === 'Subscript');
  const key = (c: unknown) => {
    const [kind, value] = variantOf(c);
    const [identKind, ident] = kind === 'Dot' ? variantOf(value) : ['', null];
    if (identKind !== 'Identifier') refuse('construct', 'This field access is not supported here: read a JSON field by its path (m.request.path).');
    return String((ident as Node).value);
  };
  const before = chain.slice(0, at).map(key);
  const after = checkedPath(chain.slice(at + 1).map(key));
  const record = ctx.scope.resolve([String(root.value), ...before]);
  if (record.t !== 'field' || record.element) return refuse('construct', 'An array subscript is supported here on a JSON field (m.parsed[SAFE_OFFSET(0)]), not on this value.');
  const { offset, safe } = subscript(variantOf(chain[at])[1]);
  if (offset < 0) {
    if (safe) return { t: 'lit', kind: 'null', value: null };
    refuse('query', 'ORDINAL(0) is out of bounds: ORDINAL counts from 1.');
  }
  return { ...record, path: [...record.path, ...after], element: { at: record.path.length, k: offset, safe } };
}

const SUBSCRIPTS: Record<string, { base: number; safe: boolean }> = {
  offset: { base: 0, safe: false },
  safe_offset: { base: 0, safe: true },
  ordinal: { base: 1, safe: false },
  safe_ordinal: { base: 1, safe: true },
};

function subscript(node: unknown): Subscript {
  const [kind, value] = variantOf(node);
  const index = kind === 'Index' ? (value as Node).index : null;
  const [indexKind, indexValue] = index === null ? ['', null] : variantOf(index);
  let how = { base: 0, safe: false };
  let literal: unknown = index;
  if (indexKind === 'Function') {
    const f = indexValue as Node;
    const name = (f.name as Node[]).map((p) => String((variantOf(p)[1] as Node).value).toLowerCase()).join('.');
    const [argsKind, list] = variantOf(f.args);
    const args = argsKind === 'List' ? ((list as Node).args as unknown[]) : [];
    if (!(name in SUBSCRIPTS) || args.length !== 1)
      refuse('construct', `The subscript ${shown(name.toUpperCase())}(...) is not supported here: write [OFFSET(n)], [SAFE_OFFSET(n)], [ORDINAL(n)] or [SAFE_ORDINAL(n)].`);
    how = SUBSCRIPTS[name]!;
    const [, expr] = variantOf((variantOf(args[0])[1] as unknown) ?? null);
    literal = expr;
  } else if (indexKind !== 'Value') {
    refuse('construct', 'An array subscript here is [OFFSET(n)], [SAFE_OFFSET(n)], [ORDINAL(n)] or [SAFE_ORDINAL(n)] of a whole number.');
  }
  const text = JSON.stringify((variantOf(literal)[1] as Node | null)?.value ?? null);
  const m = /^\{"Number":\["([0-9]{1,9})",false\]\}$/.exec(text);
  if (!m) return refuse('construct', 'An array subscript here takes a whole number literal: [OFFSET(95)].');
  return { offset: Number(m[1]) - how.base, safe: how.safe };
}
