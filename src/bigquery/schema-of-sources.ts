import type { SourceDescriptor } from '../sources/source-descriptor';
import { sourceTableKinds } from '../sandbox/source-tables';
import type { BigQuerySchema } from './schema';

/**
 * What a caller's BigQuery SQL may read over these sources: a table per source named by its
 * relation, with the columns its source table shows (docs/sandboxing.md, "Source tables"), and as
 * known fields of `metadata` the paths its descriptor derives columns from (`request.path`) and the
 * fields it declares (`parsed.error_severity`), which let a bare name (`where path like ...`)
 * resolve through an unnest alias.
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
          fields: { metadata: [...s.columns.flatMap((c) => (c.path === null ? [] : [c.path.replace(/^\$\./, '')])), ...s.fields] },
        },
      ]),
    ),
  };
}
