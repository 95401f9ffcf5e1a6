/**
 * The functions a caller's SQL may call, by group (docs/sandboxing.md, "Functions"). Everything
 * else is refused: functions that read the file system, the network, the environment, settings,
 * the catalog, sequences, variables or the clock (`read_text`, `getenv`, `current_setting`,
 * `now`, `nextval`, `version`, ...), random ones, the engine's own macros, and `list_aggregate`
 * and its aliases (they call a function named in a string, past this list). Names are DuckDB's,
 * lower case; aliases are listed one by one, so a new DuckDB alias is refused until it is added.
 *
 * @example
 * ALLOWED_FUNCTIONS.has('regexp_extract'); // true
 * ALLOWED_FUNCTIONS.has('getenv'); // false
 */
export const FUNCTION_GROUPS = {
  /** Operators as DuckDB's parser names them (`a + b` is the function `+`, `a LIKE b` is `~~`). */
  operators: [
    '+', '-', '*', '/', '//', '%', '**', '^', '&', '|', '<<', '>>', '~', '!__postfix', '@', '||',
    '~~', '!~~', '~~*', '!~~*', '~~~', '^@', '@>', '<@', '&&', '->>',
  ],
  string: [
    'ascii', 'bit_length', 'chr', 'concat', 'concat_ws', 'contains', 'ends_with', 'format', 'printf',
    'ilike_escape', 'instr', 'lcase', 'left', 'left_grapheme', 'len', 'length', 'length_grapheme',
    'levenshtein', 'damerau_levenshtein', 'hamming', 'jaccard', 'jaro_similarity', 'jaro_winkler_similarity',
    'editdist3', 'mismatches', 'like_escape', 'not_like_escape', 'not_ilike_escape', 'lower', 'lpad', 'ltrim',
    'md5', 'nfc_normalize', 'octet_length', 'ord', 'position', 'prefix', 'repeat', 'replace', 'reverse',
    'right', 'right_grapheme', 'rpad', 'rtrim', 'sha1', 'sha256', 'split', 'split_part', 'starts_with',
    'str_split', 'string_split', 'string_to_array', 'strip_accents', 'strlen', 'strpos', 'substr',
    'substring', 'substring_grapheme', 'suffix', 'translate', 'trim', 'ucase', 'unicode', 'upper',
    'url_decode', 'url_encode', 'char_length', 'character_length', 'hash', 'to_base64', 'base64',
    'from_base64', 'hex', 'unhex', 'to_hex', 'from_hex', 'format_bytes', 'formatreadablesize',
    'formatreadabledecimalsize', 'bar',
  ],
  regex: [
    'regexp_matches', 'regexp_full_match', 'regexp_extract', 'regexp_extract_all', 'regexp_replace',
    'regexp_split_to_array', 'regexp_escape', 'string_split_regex', 'str_split_regex',
  ],
  dateTime: [
    'date_part', 'datepart', 'date_trunc', 'datetrunc', 'date_diff', 'datediff', 'date_sub', 'datesub',
    'date_add', 'time_bucket', 'strftime', 'strptime', 'try_strptime', 'epoch', 'epoch_ms', 'epoch_us',
    'epoch_ns', 'to_timestamp', 'make_date', 'make_time', 'make_timestamp', 'make_timestamp_ms',
    'make_timestamp_ns', 'make_timestamptz', 'timezone', 'last_day', 'dayname', 'monthname', 'year',
    'month', 'day', 'hour', 'minute', 'second', 'millisecond', 'microsecond', 'nanosecond', 'week',
    'weekofyear', 'weekday', 'dayofweek', 'dayofmonth', 'dayofyear', 'isodow', 'isoyear', 'yearweek',
    'quarter', 'decade', 'century', 'millennium', 'era', 'julian', 'days_in_month', 'to_years',
    'to_months', 'to_weeks', 'to_days', 'to_hours', 'to_minutes', 'to_seconds', 'to_milliseconds',
    'to_microseconds', 'to_quarters', 'to_decades', 'to_centuries', 'to_millennia', 'normalized_interval',
  ],
  math: [
    'abs', 'acos', 'asin', 'atan', 'atan2', 'cbrt', 'ceil', 'ceiling', 'cos', 'cot', 'degrees', 'divide',
    'even', 'exp', 'factorial', 'floor', 'fmod', 'gamma', 'gcd', 'greatest', 'greatest_common_divisor',
    'isfinite', 'isinf', 'isnan', 'lcm', 'least', 'least_common_multiple', 'lgamma', 'ln', 'log', 'log10',
    'log2', 'mod', 'multiply', 'add', 'subtract', 'nextafter', 'pi', 'pow', 'power', 'radians', 'round',
    'round_even', 'roundbankers', 'sign', 'signbit', 'sin', 'sqrt', 'tan', 'trunc', 'fdiv', 'xor',
    'bit_count', 'equi_width_bins',
  ],
  json: [
    'json', 'json_array', 'json_array_length', 'json_contains', 'json_exists', 'json_extract',
    'json_extract_path', 'json_extract_path_text', 'json_extract_string', 'json_keys', 'json_merge_patch',
    'json_object', 'json_pretty', 'json_quote', 'json_structure', 'json_transform', 'json_transform_strict',
    'json_type', 'json_valid', 'json_value', 'to_json', 'from_json', 'from_json_strict', 'array_to_json',
    'row_to_json',
  ],
  list: [
    'list_value', 'list_pack', 'list_extract', 'list_element', 'element_at', 'list_slice', 'array_slice',
    'array_extract', 'list_contains', 'list_has', 'array_contains', 'array_has', 'list_has_all',
    'array_has_all', 'list_has_any', 'array_has_any', 'list_position', 'list_indexof', 'array_position',
    'array_indexof', 'list_concat', 'list_cat', 'array_concat', 'array_cat', 'list_append', 'array_append',
    'array_push_back', 'list_prepend', 'array_prepend', 'array_push_front', 'list_distinct',
    'array_distinct', 'list_unique', 'array_unique', 'list_sort', 'array_sort', 'list_reverse_sort',
    'array_reverse_sort', 'list_reverse', 'array_reverse', 'list_filter', 'array_filter', 'filter',
    'list_transform', 'array_transform', 'list_apply', 'array_apply', 'apply', 'list_reduce',
    'array_reduce', 'reduce',
    'list_zip', 'array_zip', 'list_where', 'array_where', 'list_select', 'array_select', 'list_intersect',
    'array_intersect', 'list_resize', 'array_resize', 'list_grade_up', 'array_grade_up', 'grade_up',
    'len', 'array_length', 'cardinality', 'flatten', 'unnest', 'generate_series', 'range', 'array_value',
    'array_to_string', 'list_sum', 'list_min', 'list_max', 'list_avg', 'list_count', 'list_first',
    'list_last', 'list_median', 'list_mode', 'list_string_agg', 'list_any_value', 'list_bool_and',
    'list_bool_or', 'list_product', 'list_stddev_samp', 'list_stddev_pop', 'list_var_samp',
    'list_var_pop', 'list_histogram', 'list_approx_count_distinct', 'list_entropy', 'list_kurtosis',
    'list_skewness', 'list_sem', 'list_mad',
  ],
  structAndMap: [
    'struct_pack', 'struct_extract', 'struct_extract_at', 'row', 'struct_insert', 'struct_keys',
    'struct_values', 'map', 'map_extract', 'map_extract_value', 'element_at', 'map_keys', 'map_values',
    'map_entries', 'map_from_entries', 'map_concat', 'map_contains', 'cardinality',
  ],
  // COALESCE, IF and CASE are the parser's own expressions, not functions.
  conditional: ['nullif', 'constant_or_null', 'typeof'],
  aggregate: [
    'count', 'count_star', 'count_if', 'countif', 'sum', 'fsum', 'sumkahan', 'kahan_sum', 'avg', 'mean',
    'favg', 'min', 'max', 'min_by', 'max_by', 'arg_min', 'arg_max', 'argmin', 'argmax', 'arg_min_null',
    'arg_max_null', 'any_value', 'arbitrary', 'first', 'last', 'list', 'array_agg', 'string_agg',
    'group_concat', 'listagg', 'approx_count_distinct', 'approx_quantile', 'approx_top_k', 'quantile',
    'quantile_cont', 'quantile_disc', 'reservoir_quantile', 'median', 'mode', 'histogram',
    'histogram_exact', 'stddev', 'stddev_samp', 'stddev_pop', 'variance', 'var_samp', 'var_pop', 'corr',
    'covar_pop', 'covar_samp', 'entropy', 'kurtosis', 'kurtosis_pop', 'skewness', 'sem', 'mad',
    'product', 'bool_and', 'bool_or', 'bit_and', 'bit_or', 'bit_xor', 'geomean', 'geometric_mean',
    'weighted_avg', 'wavg', 'regr_avgx', 'regr_avgy', 'regr_count', 'regr_intercept', 'regr_r2',
    'regr_slope', 'regr_sxx', 'regr_sxy', 'regr_syy', 'json_group_array', 'json_group_object',
    'json_group_structure',
  ],
  /** Only inside `OVER (...)`, besides the aggregates. */
  window: [
    'row_number', 'rank', 'dense_rank', 'rank_dense', 'percent_rank', 'cume_dist', 'ntile', 'lag',
    'lead', 'first_value', 'last_value', 'nth_value',
  ],
} as const;

const lower = (names: readonly string[]) => names.map((n) => n.toLowerCase());

/** Functions a caller may call outside a window: every group but `window`. */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set(
  Object.entries(FUNCTION_GROUPS).flatMap(([group, names]) => (group === 'window' ? [] : lower(names))),
);

/** Functions a caller may use with `OVER (...)`: the window functions and the aggregates. */
export const ALLOWED_WINDOW_FUNCTIONS: ReadonlySet<string> = new Set(lower([...FUNCTION_GROUPS.window, ...FUNCTION_GROUPS.aggregate]));

/**
 * Names DuckDB binds as a function call when no column has them (`SELECT current_user`): they
 * read the session, the catalog or the clock, so they are refused even as column names.
 */
export const SQL_VALUE_FUNCTION_NAMES: ReadonlySet<string> = new Set([
  'current_catalog', 'current_date', 'current_schema', 'current_role', 'current_time', 'current_timestamp',
  'current_user', 'localtime', 'localtimestamp', 'session_user', 'user',
]);

/** Collations a caller may name (`x COLLATE nocase`); combined with dots (`nocase.noaccent`). */
export const ALLOWED_COLLATIONS: ReadonlySet<string> = new Set(['nocase', 'noaccent', 'nfc', 'binary']);
