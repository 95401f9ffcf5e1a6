import { FUNCTION_GROUPS } from './allowed-functions';

/**
 * How big the value of each allowed function can be, for the size check of a caller's SQL
 * (docs/sandboxing.md, "Limits"; `size-bounds.ts` applies it). Why the check: DuckDB's memory limit
 * covers the state of its operators (hash tables, sorts, aggregates), not the values expressions
 * compute, and a constant expression is computed while the query is planned, where no interrupt
 * reaches it: `range(1000000000)` took a process to 24 GB. So every function says how its value
 * grows with its arguments, and the check refuses a query whose values can grow past the limits.
 *
 * - `fixed`: a number, a boolean, a date, a hash: a few bytes whatever the arguments;
 * - `{ scale: k }`: at most k times the bytes of its arguments together (+ a few): `||` and most text
 *   and list functions are 1, `to_json` 6 (escapes), `str_split` 17 (16 bytes per piece, even empty);
 * - `collect`: an aggregate that keeps every value it sees (`list`, `string_agg`): as big as DuckDB's
 *   memory limit lets its state grow (that state is counted by the limit);
 * - the functions whose arguments say how big the result is (a count, a width, a replacement, a
 *   lambda): each its own rule, and their size arguments must be constants.
 *
 * @example
 * sizeRuleOf('md5'); // 'fixed'
 * sizeRuleOf('repeat'); // 'repeat'
 */
export type SizeRule =
  | 'fixed'
  | { scale: number }
  | 'collect'
  | 'range'
  | 'series'
  | 'bins'
  | 'repeat'
  | 'pad'
  | 'resize'
  | 'format'
  | 'printf'
  | 'strftime'
  | 'replace'
  | 'transform'
  | 'filter'
  | 'reduce'
  | 'json_path'
  | 'join';

const FIXED_STRING = [
  'ascii',
  'bit_length',
  'chr',
  'contains',
  'ends_with',
  'instr',
  'len',
  'length',
  'length_grapheme',
  'levenshtein',
  'damerau_levenshtein',
  'hamming',
  'jaccard',
  'jaro_similarity',
  'jaro_winkler_similarity',
  'editdist3',
  'mismatches',
  'like_escape',
  'not_like_escape',
  'ilike_escape',
  'not_ilike_escape',
  'md5',
  'sha1',
  'sha256',
  'octet_length',
  'ord',
  'position',
  'prefix',
  'starts_with',
  'strlen',
  'strpos',
  'suffix',
  'unicode',
  'char_length',
  'character_length',
  'hash',
  'format_bytes',
  'formatreadablesize',
  'formatreadabledecimalsize',
  'bar',
  'regexp_matches',
  'regexp_full_match',
  'json_array_length',
  'json_contains',
  'json_exists',
  'json_type',
  'json_valid',
  'map_contains',
  'typeof',
];

const FIXED_LIST = [
  'list_contains',
  'list_has',
  'array_contains',
  'array_has',
  'list_has_all',
  'array_has_all',
  'list_has_any',
  'array_has_any',
  'list_position',
  'list_indexof',
  'array_position',
  'array_indexof',
  'array_length',
  'cardinality',
  'list_sum',
  'list_avg',
  'list_count',
  'list_bool_and',
  'list_bool_or',
  'list_product',
  'list_stddev_samp',
  'list_stddev_pop',
  'list_var_samp',
  'list_var_pop',
  'list_approx_count_distinct',
  'list_entropy',
  'list_kurtosis',
  'list_skewness',
  'list_sem',
  'list_mad',
];

const FIXED_AGGREGATE = [
  'count',
  'count_star',
  'count_if',
  'countif',
  'sum',
  'fsum',
  'sumkahan',
  'kahan_sum',
  'avg',
  'mean',
  'favg',
  'approx_count_distinct',
  'stddev',
  'stddev_samp',
  'stddev_pop',
  'variance',
  'var_samp',
  'var_pop',
  'corr',
  'covar_pop',
  'covar_samp',
  'entropy',
  'mad',
  'kurtosis',
  'kurtosis_pop',
  'skewness',
  'sem',
  'product',
  'bool_and',
  'bool_or',
  'bit_and',
  'bit_or',
  'bit_xor',
  'geomean',
  'geometric_mean',
  'weighted_avg',
  'wavg',
  'regr_avgx',
  'regr_avgy',
  'regr_count',
  'regr_intercept',
  'regr_r2',
  'regr_slope',
  'regr_sxx',
  'regr_sxy',
  'regr_syy',
  'row_number',
  'rank',
  'dense_rank',
  'rank_dense',
  'percent_rank',
  'cume_dist',
  'ntile',
];

/** Aggregates whose value holds every value they see (or a list of them). */
const COLLECT = ['list', 'array_agg', 'string_agg', 'group_concat', 'listagg', 'histogram', 'histogram_exact', 'json_group_array', 'json_group_object', 'json_group_structure', 'approx_top_k'];

/** Operators on numbers, times and booleans (`||` and `->>` are not among them). */
const FIXED_OPERATORS = ['+', '-', '*', '/', '//', '%', '**', '^', '~~', '!~~', '~~*', '!~~*', '~~~', '^@', '@>', '<@', '&&', '!__postfix', '@'];

const SCALED: Record<string, number> = {
  // Case changes and normalisation can take more UTF-8 bytes than they read.
  lower: 3,
  upper: 3,
  lcase: 3,
  ucase: 3,
  nfc_normalize: 3,
  translate: 4,
  url_encode: 3,
  to_base64: 2,
  base64: 2,
  hex: 8,
  to_hex: 8,
  json: 6,
  to_json: 6,
  json_quote: 6,
  array_to_json: 6,
  row_to_json: 6,
  json_pretty: 8,
  json_structure: 4,
  json_keys: 17,
  json_transform: 17,
  json_transform_strict: 17,
  from_json: 17,
  from_json_strict: 17,
  // A list of pieces: 16 bytes for each, even an empty one.
  split: 17,
  str_split: 17,
  string_split: 17,
  string_to_array: 17,
  regexp_split_to_array: 17,
  string_split_regex: 17,
  str_split_regex: 17,
  regexp_extract_all: 17,
  list_grade_up: 17,
  array_grade_up: 17,
  grade_up: 17,
  list_zip: 2,
  array_zip: 2,
  list_string_agg: 4,
  list_histogram: 2,
  map_entries: 2,
  map_from_entries: 2,
  map: 2,
  // Each argument as text (a double takes 25 characters).
  format: 4,
  printf: 4,
};

const SPECIAL: Record<string, SizeRule> = {
  range: 'range',
  generate_series: 'series',
  equi_width_bins: 'bins',
  repeat: 'repeat',
  lpad: 'pad',
  rpad: 'pad',
  list_resize: 'resize',
  array_resize: 'resize',
  format: 'format',
  printf: 'printf',
  strftime: 'strftime',
  replace: 'replace',
  regexp_replace: 'replace',
  list_transform: 'transform',
  array_transform: 'transform',
  list_apply: 'transform',
  array_apply: 'transform',
  apply: 'transform',
  list_filter: 'filter',
  array_filter: 'filter',
  filter: 'filter',
  list_reduce: 'reduce',
  array_reduce: 'reduce',
  reduce: 'reduce',
  json_extract: 'json_path',
  json_extract_string: 'json_path',
  json_extract_path: 'json_path',
  json_extract_path_text: 'json_path',
  json_value: 'json_path',
  '->>': 'json_path',
  array_to_string: 'join',
  concat_ws: 'join',
};

const FIXED = new Set([
  ...FIXED_STRING,
  ...FIXED_LIST,
  ...FIXED_AGGREGATE,
  ...FIXED_OPERATORS,
  ...FUNCTION_GROUPS.math.filter((name) => name !== 'equi_width_bins'),
  ...FUNCTION_GROUPS.dateTime.filter((name) => name !== 'strftime'),
]);
const COLLECTING = new Set(COLLECT);

/** The size rule of an allowed function (lower case); `{ scale: 1 }` for one that only passes on or joins what it reads. */
export function sizeRuleOf(name: string): SizeRule {
  const special = SPECIAL[name];
  if (special) return special;
  if (FIXED.has(name)) return 'fixed';
  if (COLLECTING.has(name)) return 'collect';
  return { scale: SCALED[name] ?? 1 };
}
