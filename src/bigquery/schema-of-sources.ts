import type { SourceDescriptor } from '../sources/source-descriptor';
import { sourceTableKinds } from '../sandbox/source-tables';
import { ARRAYS_COLUMN, declaredSourceOf, typedFieldsOf } from '../sources/typed-fields';
import { typedHourlyName, typedPairsName } from '../sources/typed-hourly';
import { jsonKeysText } from './ir';
import type { BigQuerySchema, BigQueryTable } from './schema';

/** The source's typed fields as the translator reads them (none: no `typed`). */
function typedOf(source: SourceDescriptor): Pick<BigQueryTable, 'typed'> {
  const fields = typedFieldsOf(source);
  if (!fields.length) return {};
  const declared = new Set(declaredSourceOf(source).typedFields);
  const hourly = typedHourlyName(source.relation);
  const pairs = typedPairsName(source.relation);
  return {
    typed: {
      metadata: {
        arrays: ARRAYS_COLUMN,
        fields: Object.fromEntries(fields.map((f) => [jsonKeysText(f.keys), { text: f.text, json: f.json, declared: declared.has(f.path), path: f.path }])),
        ...(hourly in source.rollups ? { hourly } : {}),
        ...(pairs in source.rollups ? { pairs: { relation: pairs, fields: declaredSourceOf(source).typedPairs } } : {}),
      },
    },
  };
}

/**
 * What a caller's BigQuery SQL may read over these sources: a table per source named by its
 * relation, with the columns its source table shows (docs/sandboxing.md, "Source tables"), and as
 * known fields of `metadata` the paths its descriptor derives columns from (`request.path`) and the
 * fields it declares (`parsed.error_severity`), which let a bare name (`where path like ...`)
 * resolve through an unnest alias; and the typed fields it keeps as columns (`typed`). Fields
 * discovered by compaction are columns only, never known fields: what a text means does not change
 * when they are discovered, only how it is read.
 *
 * @example
 * bigQuerySchemaOf([edgeLogs]).tables.edge_logs.fields; // { metadata: ['request.path', 'request.url', 'response.status_code'] }
 */
export function bigQuerySchemaOf(sources: readonly SourceDescriptor[]): BigQuerySchema {
  return {
    tables: Object.fromEntries(
      sources.map((s) => [
        s.relation,
        {
          columns: sourceTableKinds(s),
          fields: { metadata: [...new Set([...s.columns.flatMap((c) => (c.path === null ? [] : [c.path.replace(/^\$\./, '')])), ...s.fields, ...declaredSourceOf(s).typedFields])] },
          ...typedOf(s),
        },
      ]),
    ),
  };
}
