import type { ColumnSpec, ColumnType, ParamSpec } from '../definitions/definition';
import type { EndpointDescription } from '../definitions/describe';
import { MAX_PARAM_LENGTH } from '../definitions/params';
import { CATALOG_MAX_DAYS } from '../definitions/catalog';

type Json = Record<string, unknown>;

/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the same definitions the endpoints
 * run, so it cannot drift from what the server answers.
 */
export function openApiDocument(definitions: readonly EndpointDescription[], options: { basePath: string; auth: boolean }): Json {
  const paths: Json = {
    '/health': {
      get: {
        operationId: 'health',
        summary: 'Liveness and engine readiness (no key needed).',
        security: [],
        responses: {
          '200': { description: 'The engine answers.', content: jsonContent({ type: 'object', properties: { status: { const: 'ok' } } }) },
          '503': { description: 'The engine does not answer.', content: jsonContent({ type: 'object', properties: { status: { const: 'unavailable' } } }) },
        },
      },
    },
    '/api/endpoints': {
      get: {
        operationId: 'listEndpoints',
        summary: 'The endpoint definitions: name, UUID, parameters, columns, max rows, cache policy.',
        responses: { '200': { description: 'The definitions.', content: jsonContent({ type: 'object', properties: { result: { type: 'array' } } }) }, '401': ref('Error') },
      },
    },
    '/api/catalog': {
      get: {
        operationId: 'catalog',
        summary: 'The projects seen in the logs, busiest first, with their edge-function ids (what pickers offer).',
        parameters: [
          {
            name: 'days',
            in: 'query',
            required: false,
            description: `How many days back to look (default 7, at most ${CATALOG_MAX_DAYS}).`,
            schema: { type: 'string', pattern: '^[0-9]+$', examples: ['7'] },
          },
        ],
        responses: {
          '200': {
            description: 'The catalog.',
            content: jsonContent({
              type: 'object',
              required: ['result'],
              properties: {
                result: {
                  type: 'object',
                  required: ['since', 'projects'],
                  properties: {
                    since: { ...COLUMN_SCHEMAS.timestamp, description: 'Events at or after this instant were looked at.' },
                    projects: {
                      type: 'array',
                      items: {
                        type: 'object',
                        required: ['project', 'requests', 'invocations', 'functionIds', 'lastSeen'],
                        properties: {
                          project: { type: 'string' },
                          requests: { type: 'integer', description: 'Gateway log events.' },
                          invocations: { type: 'integer', description: 'Edge-function invocations.' },
                          functionIds: { type: 'array', items: { type: 'string' }, description: 'Busiest first.' },
                          lastSeen: COLUMN_SCHEMAS.timestamp,
                        },
                      },
                    },
                  },
                },
              },
            }),
          },
          '400': ref('Error'),
          '401': ref('Error'),
          '500': ref('Error'),
          '503': ref('Error'),
        },
      },
    },
  };
  for (const d of definitions) {
    const operation = (operationId: string) => ({
      operationId,
      summary: d.description,
      description: `${d.description} At most ${d.maxRows} rows. ${d.cache ? `Cached for ${d.cache.ttlSeconds} s.` : 'Never cached.'}${d.sandboxed ? SANDBOXED : ''}`,
      parameters: [...d.params.map(parameter), ...(d.sandboxed ? [SQL_PARAMETER] : [])],
      responses: {
        '200': {
          description: 'The rows. `Accept` selects JSON (default), CSV, NDJSON or an Arrow IPC stream.',
          headers: {
            'X-Cache': { schema: { enum: ['HIT', 'MISS', 'BYPASS'] } },
            'X-Skipped-Files': {
              description: 'Present when files could not be read and were left out: `<name>;reason=<code>` items, comma separated.',
              schema: { type: 'string' },
            },
          },
          content: {
            ...jsonContent({ type: 'object', required: ['result'], properties: { result: { type: 'array', maxItems: d.maxRows, items: rowSchema(d.columns) } } }),
            'text/csv': { schema: { type: 'string' } },
            'application/x-ndjson': { schema: { type: 'string' } },
            'application/vnd.apache.arrow.stream': { schema: { type: 'string', contentEncoding: 'binary' } },
          },
        },
        '400': ref('Error'),
        '401': ref('Error'),
        '500': ref('Error'),
        '503': ref('Error'),
        '504': ref('Error'),
      },
    });
    // A sandboxed endpoint also takes POST, with the caller's SQL in a JSON body.
    const post = (operationId: string) => (d.sandboxed ? { post: { ...operation(operationId), requestBody: SQL_BODY } } : {});
    paths[`/api/endpoints/${d.name}`] = { get: operation(camel(d.name)), ...post(`${camel(d.name)}Sql`) };
    paths[`/api/endpoints/query/${d.id}`] = { get: operation(`${camel(d.name)}ById`), ...post(`${camel(d.name)}ByIdSql`) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'log-endpoints',
      version: '1.0.0',
      description: 'Saved analytical queries over log files. Errors: {"error": {"code", "message", "status", "param"?}}.',
    },
    servers: [{ url: options.basePath === '' ? '/' : options.basePath }],
    ...(options.auth ? { security: [{ apiKey: [] }, { bearer: [] }] } : {}),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY' },
        bearer: { type: 'http', scheme: 'bearer' },
      },
      responses: {
        Error: {
          description: 'An error with a stable code.',
          content: jsonContent({
            type: 'object',
            required: ['error'],
            properties: {
              error: {
                type: 'object',
                required: ['code', 'message', 'status'],
                properties: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' }, param: { type: 'string' }, rule: { type: 'string' } },
              },
            },
          }),
        },
      },
    },
  };
}

const SANDBOXED =
  ' Sandboxed: `sql` (query string, or `{"sql": ...}` in a GET or POST JSON body) is a SELECT over the endpoint\'s CTEs that replaces its outer SELECT; the rows then have its columns. Rules: docs/sandboxing.md; refusals are 400 `invalid_sql`.';

const SQL_PARAMETER: Json = {
  name: 'sql',
  in: 'query',
  required: false,
  description: "A SELECT over the endpoint's CTEs (docs/sandboxing.md).",
  schema: { type: 'string', examples: ['select id, timestamp, event_message from edge_logs order by timestamp desc limit 100'] },
};

const SQL_BODY: Json = {
  required: false,
  content: jsonContent({ type: 'object', properties: { sql: { type: 'string', description: "A SELECT over the endpoint's CTEs." } } }),
};

function parameter(p: ParamSpec): Json {
  const schema: Json = { type: 'string', maxLength: MAX_PARAM_LENGTH };
  if (p.values && p.otherwise === undefined) schema.enum = [...p.values];
  if (p.values && p.otherwise !== undefined) schema.examples = [...p.values];
  if (p.format === 'iso-timestamp') schema.format = 'date-time';
  if (p.format === 'regex') schema.format = 'regex';
  if (p.format === 'integer') Object.assign(schema, { pattern: '^[+-]?\\d{1,15}$' }, p.min !== undefined ? { 'x-minimum': p.min } : {}, p.max !== undefined ? { 'x-maximum': p.max } : {});
  if (p.default !== undefined) schema.default = p.default;
  return { name: p.name, in: 'query', required: p.required, description: p.description, schema };
}

const COLUMN_SCHEMAS: Record<ColumnType, Json> = {
  timestamp: { type: 'string', format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z$' },
  integer: { type: 'integer' },
  float: { type: 'number' },
  text: { type: 'string' },
  json: { type: 'object' },
  boolean: { type: 'boolean' },
};

function rowSchema(columns: readonly ColumnSpec[]): Json {
  const properties: Json = {};
  for (const c of columns) {
    const schema = COLUMN_SCHEMAS[c.type];
    // Nullable columns (and every value the engine may leave empty) admit null.
    const type = c.nullable ? [schema.type, 'null'] : schema.type;
    properties[c.name] = { ...schema, type, description: c.description };
  }
  return { type: 'object', required: columns.map((c) => c.name), properties };
}

function jsonContent(schema: Json): Json {
  return { 'application/json': { schema } };
}

function ref(name: string): Json {
  return { $ref: `#/components/responses/${name}` };
}

/** `functions.invocation-stats` -> `functionsInvocationStats`. */
function camel(name: string): string {
  return name.replace(/[.-](\w)/g, (_, c: string) => c.toUpperCase());
}
