/** The output formats of query results. */
export type OutputFormat = 'json' | 'csv' | 'ndjson' | 'arrow';

export const CONTENT_TYPES: Record<OutputFormat, string> = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
  ndjson: 'application/x-ndjson; charset=utf-8',
  arrow: 'application/vnd.apache.arrow.stream',
};

const MEDIA_TYPES: Record<string, OutputFormat> = {
  'application/json': 'json',
  'text/csv': 'csv',
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'application/jsonl': 'ndjson',
  'application/vnd.apache.arrow.stream': 'arrow',
};

/**
 * The format an `Accept` header asks for: the supported media type with the highest q-value
 * (ties go to the one listed first). JSON when the header is absent, `*` or names nothing we
 * can produce: an answer in the default format is more useful than a 406.
 */
export function negotiateFormat(accept: string | null): OutputFormat {
  if (accept === null) return 'json';
  let best: { format: OutputFormat; q: number } | null = null;
  for (const part of accept.split(',').slice(0, 32)) {
    const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const format = type === '*/*' || type === 'application/*' ? 'json' : MEDIA_TYPES[type];
    if (format === undefined) continue;
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!(q > 0) || q > 1) continue;
    // Wildcards lose ties against named types.
    const weight = q - (type.endsWith('*') ? 0.0001 : 0);
    if (best === null || weight > best.q) best = { format, q: weight };
  }
  return best?.format ?? 'json';
}
