import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  createEndpoints,
  defineEndpoint,
  p,
  type DefinitionParams,
  type EndpointMethods,
  type Endpoints,
  type FunctionsInvocationStatsParams,
  type FunctionsInvocationStatsRow,
  type LogsAllParams,
  type LogsAllRow,
  type MethodName,
  type QueryResult,
  type UsageApiCountsParams,
  type UsageApiCountsRow,
} from '../src/index';

// Type tests: `npm test` runs `tsc --noEmit` over this file first, so every `expectTypeOf` below
// and every `@ts-expect-error` (an error that must be there) is checked by the compiler. The
// runtime assertions only make sure the definitions compile to what the types say.

const errorsByPath = defineEndpoint({
  name: 'errors.by-path',
  params: { project: p.text(), since: p.isoTimestamp().optional(), min_status: p.integer().default(400), tier: p.oneOf(['FREE', 'PRO']) },
  sql: {
    duckdb:
      'SELECT request_path AS path, count(*) AS errors, max(timestamp) AS last FROM edge_logs WHERE project = $project AND status_code >= $min_status AND ($since IS NULL OR timestamp > $since) AND $tier IS NOT NULL GROUP BY 1',
  },
  columns: { path: 'text', errors: 'integer', last: { type: 'timestamp', nullable: true } },
});

declare const ep: Endpoints<typeof errorsByPath>;

describe('types inferred from definitions', () => {
  it('a user endpoint: parameters and rows from its declaration, no `as const` needed', () => {
    expectTypeOf<DefinitionParams<typeof errorsByPath>>().toEqualTypeOf<{ project: string; tier: 'FREE' | 'PRO'; since?: string | Date | null; min_status?: number | string | null }>();
    const typed = () => {
      expectTypeOf(ep.query('errors.by-path', { project: 'abc', tier: 'PRO' })).resolves.toEqualTypeOf<QueryResult<{ path: string; errors: number; last: string | null }>>();
      // @ts-expect-error a required parameter is missing
      void ep.query('errors.by-path', { tier: 'PRO' });
      // @ts-expect-error a misspelt parameter
      void ep.query('errors.by-path', { project: 'abc', tier: 'PRO', min_statuss: 500 });
      // @ts-expect-error a value outside the one-of list
      void ep.query('errors.by-path', { project: 'abc', tier: 'GOLD' });
    };
    expect(typeof typed).toBe('function');
    expect(errorsByPath.params.map((s) => s.name)).toEqual(['project', 'since', 'min_status', 'tier']);
  });

  it('a built-in: typed the same way, and a misspelt filter no longer falls through to untyped', () => {
    expectTypeOf<LogsAllRow>().toEqualTypeOf<{ id: string | null; timestamp: string; event_message: string | null; metadata: Record<string, unknown> | null }>();
    expectTypeOf<UsageApiCountsParams['interval']>().toEqualTypeOf<'hourly' | 'daily' | 'minutely' | '15min' | '30min' | '1hr' | '3hr' | '1day' | '3day' | '7day'>();
    const typed = () => {
      expectTypeOf(ep.query('logs.all', { project: 'abc' })).resolves.toEqualTypeOf<QueryResult<LogsAllRow>>();
      // @ts-expect-error the issue's example: a misspelt iso_timestamp_start
      void ep.query('logs.all', { project: 'abc', iso_timestamp_strat: '2026-11-21T00:00:00Z' });
      // @ts-expect-error a required parameter is missing
      void ep.query('functions.invocation-stats', { interval: '1hr' });
      // @ts-expect-error not an interval of usage.api-counts
      void ep.usageApiCounts({ project: 'abc', interval: 'weekly' });
      // A name only known at run time (from a query string) is the untyped form.
      const name: string = 'logs.all';
      void ep.query(name, { project: 'abc', anything: 'goes' });
    };
    expect(typeof typed).toBe('function');
  });
});

// An endpoint whose method name would shadow a member of Endpoints: it keeps `query` only.
const _closeEndpoint = defineEndpoint({ name: 'close', params: { project: p.text() }, sql: { duckdb: 'SELECT 1 AS n FROM edge_logs WHERE project = $project' }, columns: { n: 'integer' } });

declare const mine: Endpoints<typeof errorsByPath> & EndpointMethods<typeof errorsByPath>;
declare const closing: Endpoints<typeof _closeEndpoint> & EndpointMethods<typeof _closeEndpoint>;

describe('a method per endpoint, derived from its definition', () => {
  it('named by camelCasing the endpoint name, typed by its parameters and rows', () => {
    expectTypeOf<MethodName<'functions.invocation-stats'>>().toEqualTypeOf<'functionsInvocationStats'>();
    expectTypeOf<MethodName<'a.b-c_d'>>().toEqualTypeOf<'aBCD'>();
    const typed = () => {
      expectTypeOf(mine.errorsByPath).parameter(0).toEqualTypeOf<DefinitionParams<typeof errorsByPath>>();
      expectTypeOf(mine.errorsByPath({ project: 'abc', tier: 'PRO' })).resolves.toEqualTypeOf<Array<{ path: string; errors: number; last: string | null }>>();
      // @ts-expect-error a misspelt parameter
      void mine.errorsByPath({ project: 'abc', tier: 'PRO', min_statuss: 500 });
      // @ts-expect-error no endpoint is named so: no such method
      void mine.errorsByPat;
      // The built-ins' methods: the same names as always, derived the same way.
      expectTypeOf(ep.functionsInvocationStats).toEqualTypeOf<(params: FunctionsInvocationStatsParams) => Promise<FunctionsInvocationStatsRow[]>>();
      expectTypeOf(ep.logsAll).toEqualTypeOf<(params: LogsAllParams) => Promise<LogsAllRow[]>>();
      expectTypeOf(ep.usageApiCounts).toEqualTypeOf<(params: UsageApiCountsParams) => Promise<UsageApiCountsRow[]>>();
      // What createEndpoints returns has them, inferred from the definitions given.
      const _made = () => createEndpoints({ sources: {}, endpoints: [errorsByPath] });
      expectTypeOf<Awaited<ReturnType<typeof _made>>['errorsByPath']>().toEqualTypeOf<typeof mine.errorsByPath>();
      // Still an Endpoints: it goes wherever one is taken (createHandler, startServer).
      expectTypeOf(mine).toMatchTypeOf<Endpoints>();
      // A name that would shadow a member keeps the member.
      expectTypeOf(closing.close).toEqualTypeOf<() => Promise<void>>();
    };
    expect(typeof typed).toBe('function');
  });
});
