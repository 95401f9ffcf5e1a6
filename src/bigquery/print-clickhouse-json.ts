/**
 * BigQuery's JSON_VALUE of a STRING (a log line holding JSON) in ClickHouse 18.16's SQL, which
 * has no JSON parser (JSONExtract came later; visitParamExtract* find a name at any depth and
 * allow no spaces). The text is cut into JSON's tokens by one regular expression, checked against
 * JSON's grammar token by token, and the path is followed level by level through the tokens'
 * depths: the scalar at the path as text (a string decoded), NULL for a missing path, a JSON null,
 * an object or an array, and for text that is not JSON, as BigQuery answers. It costs far more
 * than DuckDB's parser (about 150 µs a line that holds the keys); a line without them is cut to
 * the empty text before the tokens.
 */

/** How the printer writes a string literal and binds a value to a name once (print-clickhouse.ts). */
export interface ClickHouseWords {
  str: (text: string) => string;
  bind: (name: string, value: string, body: string) => string;
}

/**
 * One JSON token per match, whitespace between them skipped; any other character is a token of
 * its own, which no rule accepts (the text is then no JSON). Braces as `\x7b` `\x7d`: a literal
 * holds no `{` the parameter binding could read.
 */
const TOKEN = String.raw`"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F])*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null|[\x7b\x7d\[\]:,]|[^ \t\n\r]`;

/** Nesting past this is refused (each level is a bit of an Int64 that records which levels are arrays). */
const MAX_JSON_DEPTH = 62;

/**
 * `JSON_VALUE(text, '$.k1.k2')` as ClickHouse SQL over `text` (a String expression), the keys
 * already parsed. Tokens' kinds: 1 `{`, 2 `[`, 3 `}`, 4 `]`, 5 `:`, 6 `,`, 7 a string, 8 a number,
 * true, false or null, 0 none of these (and 9 before the first token).
 *
 * @example
 * jsonValueOfText('event_message', ['auth_event', 'action'], words); // arrayMap(__jr -> ..., [ifNull(event_message, '')])[1]
 */
export function jsonValueOfText(text: string, keys: readonly string[], { str, bind }: ClickHouseWords): string {
  const open = str('{');
  const kinds = `arrayMap(t -> multiIf(t = ${open}, 1, t = '[', 2, t = ${str('}')}, 3, t = ']', 4, t = ':', 5, t = ',', 6, length(t) > 1 AND startsWith(t, '"'), 7, t IN ('true', 'false', 'null') OR (position('-0123456789', substring(t, 1, 1)) > 0 AND t != '-'), 8, 0), __jt)`;
  const moves = 'arrayMap(k -> toInt64(multiIf(k IN (1, 2), 1, k IN (3, 4), -1, 0)), __jk)';
  // Which open levels are arrays: bit d - 1 of __js set while the container at depth d is one.
  // Shifts by a clamped amount: current ClickHouse computes both branches of an if, and refuses a negative shift.
  const shift = (d: string) => `least(greatest(${d}, 1), ${MAX_JSON_DEPTH}) - 1`;
  const bit = (d: string) => `if(${d} BETWEEN 1 AND ${MAX_JSON_DEPTH}, bitShiftLeft(toInt64(1), ${shift(d)}), toInt64(0))`;
  const arrayBits = `arrayMap((k, d, b) -> multiIf(k = 2, ${bit('d')}, k = 4, -${bit('b')}, toInt64(0)), __jk, __jd, __jb)`;
  // The container each token is in: 0 the top level, 1 an object, 2 an array.
  const containers = `arrayMap((s, x, b) -> if(b BETWEEN 1 AND ${MAX_JSON_DEPTH}, 1 + bitAnd(bitShiftRight(s - x, ${shift('b')}), 1), 0), __js, __jx, __jb)`;
  const before = (a: string, first: string) => `arraySlice(arrayPushFront(${a}, ${first}), 1, length(${a}))`;
  const isKey = 'arrayMap((k, c, p) -> k = 7 AND c = 1 AND p IN (1, 6), __jk, __jc, __jp)';
  const isEnd = 'arrayMap((k, y) -> k IN (3, 4, 8) OR (k = 7 AND NOT y), __jk, __jy)';
  // Each token where JSON's grammar allows it after the one before, in the container it is in.
  const allowed =
    'arrayAll((k, c, p, py, pe) -> multiIf(k = 0, 0, k = 5, py, k = 6, pe AND c != 0, k = 3, c = 1 AND (p = 1 OR pe), k = 4, c = 2 AND (p = 2 OR pe), k = 7 AND c = 1 AND p IN (1, 6), 1, p IN (9, 5, 2) OR (p = 6 AND c = 2)), ' +
    `__jk, __jc, __jp, ${before('__jy', '0')}, ${before('__je', '0')})`;
  const valid = `length(__jt) > 0 AND ${allowed} AND __je[length(__jt)] AND __jd[length(__jt)] = 0`;
  const decode = (t: string) => `visitParamExtractString(concat(${str('{"v":')}, ${t}, ${str('}')}), 'v')`;
  const scalar = (v: string) => `multiIf(__jk[${v}] = 7, ${decode(`__jt[${v}]`)}, __jk[${v}] = 8 AND __jt[${v}] != 'null', __jt[${v}], NULL)`;
  // Level l's key among the members of the object between tokens s and e; its value two tokens on.
  const level = (l: number, s: string, e: string): string => {
    const key = JSON.stringify(keys[l - 1]!);
    const matches = `(t = ${str(key)} OR (position(t, '\\\\') > 0 AND ${decode('t')} = ${str(keys[l - 1]!)}))`;
    // Between s and e as one comparison: current ClickHouse's analyzer rewrites a chain `j > s AND j < e`
    // in one copy of an expression and not in another (optimize_and_compare_chain), and then no longer
    // finds a GROUP BY key among the SELECT's values.
    const found = `arrayFirstIndex((y, b, j, t) -> y AND b = ${l} AND least(toInt64(j) - ${s}, toInt64(${e}) - j) > 0 AND ${matches}, __jy, __jb, arrayEnumerate(__jt), __jt)`;
    const v = `__ji${l} + 2`;
    const next =
      l === keys.length ? scalar(v) : `if(__jk[${v}] != 1, NULL, ${bind(`__jz${l}`, `arrayFirstIndex((d, j) -> j > ${v} AND d = ${l}, __jd, arrayEnumerate(__jt))`, level(l + 1, v, `__jz${l}`))})`;
    return bind(`__ji${l}`, found, `if(__ji${l} = 0, NULL, ${next})`);
  };
  const lookup = keys.length === 0 ? `if(length(__jt) = 1, ${scalar('1')}, NULL)` : `if(__jk[1] != 1, NULL, ${bind('__jn', 'length(__jt)', level(1, '1', '__jn'))})`;
  // Too deep fails the query with a text no number cast reads: ClickHouse's error quotes it.
  const deep = `toInt64(if(arrayExists(d -> d > ${MAX_JSON_DEPTH}, __jd), ${str(`JSON_VALUE: JSON nested deeper than ${MAX_JSON_DEPTH} levels is not supported by the ClickHouse engine`)}, '0')) = 0`;
  let sql = `if(${deep} AND ${valid}, ${lookup}, NULL)`;
  const steps: Array<[string, string]> = [
    ['__jr', `ifNull(${text}, '')`],
    // Only a text holding each key (as `"key"`, or escaped: it then holds a backslash) can have the path: others are cut as the empty text.
    [
      '__jt',
      `extractAll(${keys.length === 0 ? '__jr' : `if((${keys.map((k) => `position(__jr, ${str(JSON.stringify(k))}) > 0`).join(' AND ')}) OR position(__jr, '\\\\') > 0, __jr, '')`}, ${str(TOKEN)})`,
    ],
    ['__jk', kinds],
    ['__jm', moves],
    ['__jd', 'arrayCumSum(__jm)'],
    ['__jb', 'arrayMap((d, m) -> d - m, __jd, __jm)'],
    ['__jx', arrayBits],
    ['__js', 'arrayCumSum(__jx)'],
    ['__jc', containers],
    ['__jp', before('__jk', '9')],
    ['__jy', isKey],
    ['__je', isEnd],
  ];
  for (const [name, value] of steps.reverse()) sql = bind(name, value, sql);
  return sql;
}
