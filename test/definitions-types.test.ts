import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  createEndpoints,
  defineEndpoint,
  p,
  supabasePreset,
  type CallParams,
  type DefinitionParams,
  type EndpointMethods,
  type Endpoints,
  type EndpointsIgnoring,
  type FunctionsInvocationStatsParams,
  type FunctionsInvocationStatsRow,
  type LogsAllParams,
  type LogsAllRow,
  type MethodName,
  type QueryResult,
  type UsageApiCountsParams,
  type UsageApiCountsRow,
  type UsageInterval,
  usageApiCounts,
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

// A definition naming its project and tier parameters (both required here), and one naming neither.
const byProject = defineEndpoint({
  name: 'errors.by-project',
  params: { project: p.text(), tier: p.oneOf(['FREE', 'PRO']), min_status: p.integer().default(400) },
  sql: { duckdb: 'SELECT count(*) AS errors FROM edge_logs WHERE ($project IS NULL OR project = $project) AND status_code >= $min_status AND ($tier IS NULL OR $tier IS NOT NULL)' },
  columns: { errors: 'integer' },
  projectParam: 'project',
  tierParam: 'tier',
});

describe('parameters the options ignore are optional in the typed calls (docs/definitions.md, "One project: `singleProject`")', () => {
  it('CallParams: the projectParam and tierParam the instance ignores become optional, nothing else', () => {
    expectTypeOf<CallParams<typeof usageApiCounts>>().toEqualTypeOf<UsageApiCountsParams>();
    expectTypeOf<CallParams<typeof usageApiCounts, 'project'>>().toEqualTypeOf<{ interval: UsageInterval; project?: string | null }>();
    // The built-ins name no tier parameter but logs.all's, which has a default already.
    expectTypeOf<CallParams<typeof usageApiCounts, 'tier'>>().toEqualTypeOf<UsageApiCountsParams>();
    expectTypeOf<CallParams<typeof byProject, 'project'>>().toEqualTypeOf<{ tier: 'FREE' | 'PRO'; min_status?: number | string | null; project?: string | null }>();
    expectTypeOf<CallParams<typeof byProject, 'project' | 'tier'>>().toEqualTypeOf<{ min_status?: number | string | null; project?: string | null; tier?: 'FREE' | 'PRO' | null }>();
    // A definition naming neither keeps every parameter as declared.
    expectTypeOf<CallParams<typeof errorsByPath, 'project' | 'tier'>>().toEqualTypeOf<DefinitionParams<typeof errorsByPath>>();
    expect(byProject.projectParam).toBe('project');
  });

  it('createEndpoints infers them from singleProject: true and tierWindow: false, and only from those literals', () => {
    const typed = async () => {
      const single = await createEndpoints({ sources: {}, singleProject: true, endpoints: [byProject, errorsByPath] });
      void single.usageApiCounts({ interval: 'daily' });
      void single.query('usage.api-counts', { interval: 'daily' });
      void single.query('logs.all', {});
      void single.functionsInvocationStats({ interval: '1hr', function_id: 'f' });
      void single.errorsByProject({ tier: 'PRO' });
      // @ts-expect-error the tier is still required: tierWindow is not false
      void single.errorsByProject({});
      // @ts-expect-error errors.by-path names no projectParam: its project stays required
      void single.errorsByPath({ tier: 'PRO' });
      // @ts-expect-error a misspelt parameter is still an error
      void single.usageApiCounts({ interval: 'daily', projct: 'x' });
      // @ts-expect-error the interval is still required
      void single.query('usage.api-counts', {});
      // Still an Endpoints, and an EndpointsIgnoring<'project'>: it goes wherever either is taken.
      expectTypeOf(single).toMatchTypeOf<Endpoints>();
      const named: EndpointsIgnoring<'project', typeof byProject | typeof errorsByPath> = single;
      void named.usageApiCounts({ interval: 'daily' });
      const anyInstance: Endpoints = named;
      void anyInstance;

      const both = await createEndpoints({ sources: {}, singleProject: true, tierWindow: false, endpoints: [byProject] });
      void both.errorsByProject({});
      void both.query('errors.by-project', { min_status: 500 });

      // The Supabase preset spreads both literals in.
      const preset = await createEndpoints({ ...supabasePreset, sources: {} });
      void preset.usageApiCounts({ interval: '7day' });
      const presetNamed: EndpointsIgnoring<'project' | 'tier'> = preset;
      const presetAny: Endpoints = presetNamed;
      void presetAny;

      const plain = await createEndpoints({ sources: {}, endpoints: [byProject] });
      // @ts-expect-error without singleProject the project is required
      void plain.usageApiCounts({ interval: 'daily' });
      // @ts-expect-error likewise by name
      void plain.query('errors.by-project', { tier: 'PRO' });
      expectTypeOf(plain.usageApiCounts).toEqualTypeOf<(params: UsageApiCountsParams) => Promise<UsageApiCountsRow[]>>();

      // A boolean not known to be true ignores nothing at the type level.
      const flag: boolean = Math.random() > 0.5;
      const maybe = await createEndpoints({ sources: {}, singleProject: flag });
      // @ts-expect-error the project may be needed
      void maybe.usageApiCounts({ interval: 'daily' });
      const off = await createEndpoints({ sources: {}, singleProject: false, tierWindow: true });
      // @ts-expect-error singleProject: false
      void off.query('usage.api-counts', { interval: 'daily' });
    };
    expect(typeof typed).toBe('function');
  });
});
