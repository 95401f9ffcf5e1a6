import { InvalidSqlError } from '../errors';

/**
 * How big the value of a function can be, for the size check of a caller's SQL
 * (docs/sandboxing.md, "Limits"; `check-sizes.ts` applies it). Why the check: DuckDB's memory limit
 * covers the state of its operators (hash tables, sorts, aggregates), not the values expressions
 * compute, and a constant expression is computed while the query is planned, where no interrupt
 * reaches it: `range(1000000000)` took a process to 24 GB. So every function says how its value
 * grows with its arguments, and the check refuses a query whose values can grow past the limits.
 *
 * - `fixed`: a number, a boolean, a date, a hash: a few bytes whatever the arguments;
 * - `{ scale: k }`: at most k times the bytes of its arguments together (+ a few): `||`, `concat`,
 *   `substr`, `min` are 1, `to_json` 6 (escapes), `str_split` 17 (16 bytes per piece, even empty);
 * - `collect`: an aggregate that keeps every value it sees (`list`, `string_agg`): as big as DuckDB's
 *   memory limit lets its state grow (that state is counted by the limit);
 * - `{ top: i }`: an aggregate of one of its first argument's values (`max`, `arg_max`), or, given a
 *   count as argument i (`max(x, 10)`, `max_by(x, y, 10)`), a list of that many: as `collect`;
 * - `{ each: i }`: its first argument's value once, or once for each element when argument i is a
 *   list (`regexp_extract`'s group names, `list_select`'s indexes, which may repeat, `quantile_disc`'s quantiles);
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
  | { top: number }
  | { each: number }
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

/** Functions by name, each with its size rule: a function is allowed only with one. */
export type FunctionGroup = Readonly<Record<string, SizeRule>>;

/**
 * The functions a caller's SQL may call, by group (docs/sandboxing.md, "Functions"), each with its
 * size rule: one table, so a function cannot be allowed without saying how big its value can be.
 * Everything else is refused: functions that read the file system, the network, the environment, settings,
 * the catalog, sequences, variables or the clock (`read_text`, `getenv`, `current_setting`,
 * `now`, `nextval`, `version`, ...), random ones, the engine's own macros, and `list_aggregate`
 * and its aliases (they call a function named in a string, past this list). Names are DuckDB's,
 * lower case; aliases are listed one by one, so a new DuckDB alias is refused until it is added.
 * A name is in one group only, with one rule (`len`, `element_at`, `cardinality` also take text or maps).
 *
 * @example
 * FUNCTION_GROUPS.string.lower; // { scale: 3 }
 * ALLOWED_FUNCTIONS.has('regexp_extract'); // true
 * ALLOWED_FUNCTIONS.has('getenv'); // false
 */
export const FUNCTION_GROUPS = {
  /** Operators as DuckDB's parser names them (`a + b` is the function `+`, `a LIKE b` is `~~`). */
  operators: {
    '+': 'fixed',
    '-': 'fixed',
    '*': 'fixed',
    '/': 'fixed',
    '//': 'fixed',
    '%': 'fixed',
    '**': 'fixed',
    '^': 'fixed',
    // On bit strings as long as their arguments.
    '&': { scale: 1 },
    '|': { scale: 1 },
    '<<': { scale: 1 },
    '>>': { scale: 1 },
    '~': { scale: 1 },
    '!__postfix': 'fixed',
    '@': 'fixed',
    '||': { scale: 1 },
    '~~': 'fixed',
    '!~~': 'fixed',
    '~~*': 'fixed',
    '!~~*': 'fixed',
    '~~~': 'fixed',
    '^@': 'fixed',
    '@>': 'fixed',
    '<@': 'fixed',
    '&&': 'fixed',
    '->>': 'json_path',
  },
  string: {
    ascii: 'fixed',
    bit_length: 'fixed',
    chr: 'fixed',
    concat: { scale: 1 },
    concat_ws: 'join',
    contains: 'fixed',
    ends_with: 'fixed',
    format: 'format',
    printf: 'printf',
    ilike_escape: 'fixed',
    instr: 'fixed',
    // Case changes and normalisation can take more UTF-8 bytes than they read.
    lcase: { scale: 3 },
    left: { scale: 1 },
    left_grapheme: { scale: 1 },
    len: 'fixed',
    length: 'fixed',
    length_grapheme: 'fixed',
    levenshtein: 'fixed',
    damerau_levenshtein: 'fixed',
    hamming: 'fixed',
    jaccard: 'fixed',
    jaro_similarity: 'fixed',
    jaro_winkler_similarity: 'fixed',
    editdist3: 'fixed',
    mismatches: 'fixed',
    like_escape: 'fixed',
    not_like_escape: 'fixed',
    not_ilike_escape: 'fixed',
    lower: { scale: 3 },
    lpad: 'pad',
    ltrim: { scale: 1 },
    md5: 'fixed',
    nfc_normalize: { scale: 3 },
    octet_length: 'fixed',
    ord: 'fixed',
    position: 'fixed',
    prefix: 'fixed',
    repeat: 'repeat',
    replace: 'replace',
    reverse: { scale: 1 },
    right: { scale: 1 },
    right_grapheme: { scale: 1 },
    rpad: 'pad',
    rtrim: { scale: 1 },
    sha1: 'fixed',
    sha256: 'fixed',
    // A list of pieces: 16 bytes for each, even an empty one.
    split: { scale: 17 },
    split_part: { scale: 1 },
    starts_with: 'fixed',
    str_split: { scale: 17 },
    string_split: { scale: 17 },
    string_to_array: { scale: 17 },
    // Decomposes and recomposes, as nfc_normalize does.
    strip_accents: { scale: 3 },
    strlen: 'fixed',
    strpos: 'fixed',
    substr: { scale: 1 },
    substring: { scale: 1 },
    substring_grapheme: { scale: 1 },
    suffix: 'fixed',
    translate: { scale: 4 },
    trim: { scale: 1 },
    ucase: { scale: 3 },
    unicode: 'fixed',
    upper: { scale: 3 },
    url_decode: { scale: 1 },
    url_encode: { scale: 3 },
    char_length: 'fixed',
    character_length: 'fixed',
    hash: 'fixed',
    to_base64: { scale: 2 },
    base64: { scale: 2 },
    from_base64: { scale: 1 },
    hex: { scale: 8 },
    unhex: { scale: 1 },
    to_hex: { scale: 8 },
    from_hex: { scale: 1 },
    format_bytes: 'fixed',
    formatreadablesize: 'fixed',
    formatreadabledecimalsize: 'fixed',
    bar: 'fixed',
  },
  regex: {
    regexp_matches: 'fixed',
    regexp_full_match: 'fixed',
    // A struct of one match per group name given.
    regexp_extract: { each: 2 },
    regexp_extract_all: { scale: 17 },
    regexp_replace: 'replace',
    regexp_split_to_array: { scale: 17 },
    // A backslash before each special character.
    regexp_escape: { scale: 2 },
    string_split_regex: { scale: 17 },
    str_split_regex: { scale: 17 },
  },
  dateTime: {
    date_part: 'fixed',
    datepart: 'fixed',
    date_trunc: 'fixed',
    datetrunc: 'fixed',
    date_diff: 'fixed',
    datediff: 'fixed',
    date_sub: 'fixed',
    datesub: 'fixed',
    date_add: 'fixed',
    time_bucket: 'fixed',
    // Its format's own bound (each specifier up to 16 times its two characters), whatever the time.
    strftime: 'strftime',
    strptime: 'fixed',
    try_strptime: 'fixed',
    epoch: 'fixed',
    epoch_ms: 'fixed',
    epoch_us: 'fixed',
    epoch_ns: 'fixed',
    to_timestamp: 'fixed',
    make_date: 'fixed',
    make_time: 'fixed',
    make_timestamp: 'fixed',
    make_timestamp_ms: 'fixed',
    make_timestamp_ns: 'fixed',
    make_timestamptz: 'fixed',
    timezone: 'fixed',
    last_day: 'fixed',
    dayname: 'fixed',
    monthname: 'fixed',
    year: 'fixed',
    month: 'fixed',
    day: 'fixed',
    hour: 'fixed',
    minute: 'fixed',
    second: 'fixed',
    millisecond: 'fixed',
    microsecond: 'fixed',
    nanosecond: 'fixed',
    week: 'fixed',
    weekofyear: 'fixed',
    weekday: 'fixed',
    dayofweek: 'fixed',
    dayofmonth: 'fixed',
    dayofyear: 'fixed',
    isodow: 'fixed',
    isoyear: 'fixed',
    yearweek: 'fixed',
    quarter: 'fixed',
    decade: 'fixed',
    century: 'fixed',
    millennium: 'fixed',
    era: 'fixed',
    julian: 'fixed',
    days_in_month: 'fixed',
    to_years: 'fixed',
    to_months: 'fixed',
    to_weeks: 'fixed',
    to_days: 'fixed',
    to_hours: 'fixed',
    to_minutes: 'fixed',
    to_seconds: 'fixed',
    to_milliseconds: 'fixed',
    to_microseconds: 'fixed',
    to_quarters: 'fixed',
    to_decades: 'fixed',
    to_centuries: 'fixed',
    to_millennia: 'fixed',
    normalized_interval: 'fixed',
  },
  math: {
    abs: 'fixed',
    acos: 'fixed',
    asin: 'fixed',
    atan: 'fixed',
    atan2: 'fixed',
    cbrt: 'fixed',
    ceil: 'fixed',
    ceiling: 'fixed',
    cos: 'fixed',
    cot: 'fixed',
    degrees: 'fixed',
    divide: 'fixed',
    even: 'fixed',
    exp: 'fixed',
    factorial: 'fixed',
    floor: 'fixed',
    fmod: 'fixed',
    gamma: 'fixed',
    gcd: 'fixed',
    greatest: 'fixed',
    greatest_common_divisor: 'fixed',
    isfinite: 'fixed',
    isinf: 'fixed',
    isnan: 'fixed',
    lcm: 'fixed',
    least: 'fixed',
    least_common_multiple: 'fixed',
    lgamma: 'fixed',
    ln: 'fixed',
    log: 'fixed',
    log10: 'fixed',
    log2: 'fixed',
    mod: 'fixed',
    multiply: 'fixed',
    add: 'fixed',
    subtract: 'fixed',
    nextafter: 'fixed',
    pi: 'fixed',
    pow: 'fixed',
    power: 'fixed',
    radians: 'fixed',
    round: 'fixed',
    round_even: 'fixed',
    roundbankers: 'fixed',
    sign: 'fixed',
    signbit: 'fixed',
    sin: 'fixed',
    sqrt: 'fixed',
    tan: 'fixed',
    trunc: 'fixed',
    fdiv: 'fixed',
    xor: 'fixed',
    bit_count: 'fixed',
    equi_width_bins: 'bins',
  },
  json: {
    // JSON text of a value: escapes take up to six bytes a character.
    json: { scale: 6 },
    // json_array, json_object and json_merge_patch: their arguments as JSON text (json_merge_patch writes numbers again: 1e9 as 1000000000.0).
    json_array: { scale: 6 },
    json_array_length: 'fixed',
    json_contains: 'fixed',
    json_exists: 'fixed',
    json_extract: 'json_path',
    json_extract_path: 'json_path',
    json_extract_path_text: 'json_path',
    json_extract_string: 'json_path',
    json_keys: { scale: 17 },
    json_merge_patch: { scale: 6 },
    json_object: { scale: 6 },
    json_pretty: { scale: 8 },
    json_quote: { scale: 6 },
    json_structure: { scale: 4 },
    json_transform: { scale: 17 },
    json_transform_strict: { scale: 17 },
    json_type: 'fixed',
    json_valid: 'fixed',
    json_value: 'json_path',
    to_json: { scale: 6 },
    from_json: { scale: 17 },
    from_json_strict: { scale: 17 },
    array_to_json: { scale: 6 },
    row_to_json: { scale: 6 },
  },
  list: {
    list_value: { scale: 1 },
    list_pack: { scale: 1 },
    list_extract: { scale: 1 },
    list_element: { scale: 1 },
    element_at: { scale: 1 },
    list_slice: { scale: 1 },
    array_slice: { scale: 1 },
    array_extract: { scale: 1 },
    list_contains: 'fixed',
    list_has: 'fixed',
    array_contains: 'fixed',
    array_has: 'fixed',
    list_has_all: 'fixed',
    array_has_all: 'fixed',
    list_has_any: 'fixed',
    array_has_any: 'fixed',
    list_position: 'fixed',
    list_indexof: 'fixed',
    array_position: 'fixed',
    array_indexof: 'fixed',
    list_concat: { scale: 1 },
    list_cat: { scale: 1 },
    array_concat: { scale: 1 },
    array_cat: { scale: 1 },
    list_append: { scale: 1 },
    array_append: { scale: 1 },
    array_push_back: { scale: 1 },
    list_prepend: { scale: 1 },
    array_prepend: { scale: 1 },
    array_push_front: { scale: 1 },
    list_distinct: { scale: 1 },
    array_distinct: { scale: 1 },
    // The number of distinct elements.
    list_unique: 'fixed',
    array_unique: 'fixed',
    list_sort: { scale: 1 },
    array_sort: { scale: 1 },
    list_reverse_sort: { scale: 1 },
    array_reverse_sort: { scale: 1 },
    list_reverse: { scale: 1 },
    array_reverse: { scale: 1 },
    list_filter: 'filter',
    array_filter: 'filter',
    filter: 'filter',
    list_transform: 'transform',
    array_transform: 'transform',
    list_apply: 'transform',
    array_apply: 'transform',
    apply: 'transform',
    list_reduce: 'reduce',
    array_reduce: 'reduce',
    reduce: 'reduce',
    list_zip: { scale: 2 },
    array_zip: { scale: 2 },
    list_where: { scale: 1 },
    array_where: { scale: 1 },
    // One element for each index, and indexes repeat.
    list_select: { each: 1 },
    array_select: { each: 1 },
    list_intersect: { scale: 1 },
    array_intersect: { scale: 1 },
    list_resize: 'resize',
    array_resize: 'resize',
    list_grade_up: { scale: 17 },
    array_grade_up: { scale: 17 },
    grade_up: { scale: 17 },
    array_length: 'fixed',
    cardinality: 'fixed',
    flatten: { scale: 1 },
    unnest: { scale: 1 },
    generate_series: 'series',
    range: 'range',
    array_value: { scale: 1 },
    array_to_string: 'join',
    list_sum: 'fixed',
    list_min: { scale: 1 },
    list_max: { scale: 1 },
    list_avg: 'fixed',
    list_count: 'fixed',
    list_first: { scale: 1 },
    list_last: { scale: 1 },
    list_median: { scale: 1 },
    list_mode: { scale: 1 },
    list_string_agg: { scale: 4 },
    list_any_value: { scale: 1 },
    list_bool_and: 'fixed',
    list_bool_or: 'fixed',
    list_product: 'fixed',
    list_stddev_samp: 'fixed',
    list_stddev_pop: 'fixed',
    list_var_samp: 'fixed',
    list_var_pop: 'fixed',
    list_histogram: { scale: 2 },
    list_approx_count_distinct: 'fixed',
    list_entropy: 'fixed',
    list_kurtosis: 'fixed',
    list_skewness: 'fixed',
    list_sem: 'fixed',
    list_mad: 'fixed',
  },
  structAndMap: {
    struct_pack: { scale: 1 },
    struct_extract: { scale: 1 },
    struct_extract_at: { scale: 1 },
    row: { scale: 1 },
    struct_insert: { scale: 1 },
    struct_keys: { scale: 1 },
    struct_values: { scale: 1 },
    map: { scale: 2 },
    map_extract: { scale: 1 },
    map_extract_value: { scale: 1 },
    map_keys: { scale: 1 },
    map_values: { scale: 1 },
    map_entries: { scale: 2 },
    map_from_entries: { scale: 2 },
    map_concat: { scale: 1 },
    map_contains: 'fixed',
  },
  // COALESCE, IF and CASE are the parser's own expressions, not functions.
  conditional: {
    nullif: { scale: 1 },
    constant_or_null: { scale: 1 },
    typeof: 'fixed',
  },
  aggregate: {
    count: 'fixed',
    count_star: 'fixed',
    count_if: 'fixed',
    countif: 'fixed',
    sum: 'fixed',
    fsum: 'fixed',
    sumkahan: 'fixed',
    kahan_sum: 'fixed',
    avg: 'fixed',
    mean: 'fixed',
    favg: 'fixed',
    // One value of the rows, or the n first with a count.
    min: { top: 1 },
    max: { top: 1 },
    min_by: { top: 2 },
    max_by: { top: 2 },
    arg_min: { top: 2 },
    arg_max: { top: 2 },
    argmin: { top: 2 },
    argmax: { top: 2 },
    // One value of the rows (the two _null ones take no count).
    arg_min_null: { scale: 1 },
    arg_max_null: { scale: 1 },
    any_value: { scale: 1 },
    arbitrary: { scale: 1 },
    first: { scale: 1 },
    last: { scale: 1 },
    list: 'collect',
    array_agg: 'collect',
    string_agg: 'collect',
    group_concat: 'collect',
    listagg: 'collect',
    approx_count_distinct: 'fixed',
    approx_quantile: { each: 1 },
    approx_top_k: 'collect',
    // One value for each quantile asked for; median and mode one.
    quantile: { each: 1 },
    quantile_cont: { each: 1 },
    quantile_disc: { each: 1 },
    reservoir_quantile: { each: 1 },
    median: { scale: 1 },
    mode: { scale: 1 },
    histogram: 'collect',
    histogram_exact: 'collect',
    stddev: 'fixed',
    stddev_samp: 'fixed',
    stddev_pop: 'fixed',
    variance: 'fixed',
    var_samp: 'fixed',
    var_pop: 'fixed',
    corr: 'fixed',
    covar_pop: 'fixed',
    covar_samp: 'fixed',
    entropy: 'fixed',
    kurtosis: 'fixed',
    kurtosis_pop: 'fixed',
    skewness: 'fixed',
    sem: 'fixed',
    mad: 'fixed',
    product: 'fixed',
    bool_and: 'fixed',
    bool_or: 'fixed',
    bit_and: 'fixed',
    bit_or: 'fixed',
    bit_xor: 'fixed',
    geomean: 'fixed',
    geometric_mean: 'fixed',
    weighted_avg: 'fixed',
    wavg: 'fixed',
    regr_avgx: 'fixed',
    regr_avgy: 'fixed',
    regr_count: 'fixed',
    regr_intercept: 'fixed',
    regr_r2: 'fixed',
    regr_slope: 'fixed',
    regr_sxx: 'fixed',
    regr_sxy: 'fixed',
    regr_syy: 'fixed',
    json_group_array: 'collect',
    json_group_object: 'collect',
    json_group_structure: 'collect',
  },
  /** Only inside `OVER (...)`, besides the aggregates. */
  window: {
    row_number: 'fixed',
    rank: 'fixed',
    dense_rank: 'fixed',
    rank_dense: 'fixed',
    percent_rank: 'fixed',
    cume_dist: 'fixed',
    ntile: 'fixed',
    lag: { scale: 1 },
    lead: { scale: 1 },
    first_value: { scale: 1 },
    last_value: { scale: 1 },
    nth_value: { scale: 1 },
  },
} satisfies Readonly<Record<string, FunctionGroup>>;

const SIZE_RULES: ReadonlyMap<string, SizeRule> = new Map(Object.values(FUNCTION_GROUPS).flatMap((group: FunctionGroup) => Object.entries(group)));

/** Functions a caller may call outside a window: every group but `window`. */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set(Object.entries(FUNCTION_GROUPS).flatMap(([group, names]) => (group === 'window' ? [] : Object.keys(names))));

/** Functions a caller may use with `OVER (...)`: the window functions and the aggregates. */
export const ALLOWED_WINDOW_FUNCTIONS: ReadonlySet<string> = new Set([...Object.keys(FUNCTION_GROUPS.window), ...Object.keys(FUNCTION_GROUPS.aggregate)]);

/**
 * The size rule of an allowed function (lower case). A name outside the table has none and is
 * refused (rule `function`), so the size check never guesses.
 *
 * @example
 * sizeRuleOf('string_agg'); // 'collect'
 */
export function sizeRuleOf(name: string): SizeRule {
  const rule = SIZE_RULES.get(name);
  if (rule === undefined) throw new InvalidSqlError('function', `The function ${name} is not allowed here; the allowed functions are in the docs (sandboxing).`);
  return rule;
}

/**
 * Names DuckDB binds as a function call when no column has them (`SELECT current_user`): they
 * read the session, the catalog or the clock, so they are refused even as column names.
 */
export const SQL_VALUE_FUNCTION_NAMES: ReadonlySet<string> = new Set([
  'current_catalog',
  'current_date',
  'current_schema',
  'current_role',
  'current_time',
  'current_timestamp',
  'current_user',
  'localtime',
  'localtimestamp',
  'session_user',
  'user',
]);

/** Collations a caller may name (`x COLLATE nocase`); combined with dots (`nocase.noaccent`). */
export const ALLOWED_COLLATIONS: ReadonlySet<string> = new Set(['nocase', 'noaccent', 'nfc', 'binary']);
