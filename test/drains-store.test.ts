import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidOptionError, InvalidParameterError, NotFoundError, SUPABASE_SOURCES } from '../src/index';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { DrainStore, DRAINS_FILE, publicDrain } from '../src/drains/drain-store';
import { checkDrainConfig, checkDrainType } from '../src/drains/drain-config';
import { isEveryEvent, parseLql } from '../src/drains/lql';
import { tempDir } from './support/log-files';

const SOURCES = BUILT_IN_SOURCE_SET.extend(SUPABASE_SOURCES).list;
const AUTH = SOURCES.find((s) => s.name === 'authLogs')!;
const NOW = () => new Date('2026-11-29T10:00:00Z');
const WEBHOOK = {
  name: 'hook',
  description: 'mine',
  type: 'webhook',
  config: { url: 'http://collector:8080/in', http: 'http1', gzip: true, headers: { 'X-Secret': 's3cret' } },
  metadata: { type: 'log-drain' },
};

function refusal(run: () => unknown): { param?: string; message: string; status: number; code: string } {
  try {
    run();
  } catch (error) {
    return error as InvalidParameterError;
  }
  throw new Error('not refused');
}

describe('drain configs', () => {
  it("takes each supported type's config as Studio's form sends it, filling the defaults", () => {
    expect(checkDrainConfig('webhook', { url: 'http://collector:8080/in' })).toEqual({ url: 'http://collector:8080/in', http: 'http1', gzip: false, headers: {} });
    expect(checkDrainConfig('datadog', { api_key: 'k', region: 'US1-FED' })).toEqual({ api_key: 'k', region: 'US1-FED' });
    expect(checkDrainConfig('loki', { url: 'http://loki:3100/loki/api/v1/push', username: 'u', password: 'p', headers: {} })).toEqual({
      url: 'http://loki:3100/loki/api/v1/push',
      username: 'u',
      password: 'p',
      headers: {},
    });
    expect(checkDrainConfig('otlp', { endpoint: 'http://otel:4318/v1/logs', protocol: 'http/protobuf', gzip: true })).toEqual({
      endpoint: 'http://otel:4318/v1/logs',
      protocol: 'http/protobuf',
      gzip: true,
      headers: {},
    });
  });

  it('refuses a wrong config naming the field, and a type Studio lists that is not forwarded to naming the supported ones', () => {
    expect(refusal(() => checkDrainConfig('webhook', { url: 'ftp://x' }))).toMatchObject({ code: 'invalid_parameter', status: 400, param: 'config.url' });
    expect(refusal(() => checkDrainConfig('webhook', {}))).toMatchObject({ param: 'config.url' });
    expect(refusal(() => checkDrainConfig('webhook', { url: 'http://x', gzip: 'yes' }))).toMatchObject({ param: 'config.gzip' });
    expect(refusal(() => checkDrainConfig('webhook', { url: 'http://x', headers: { 'Bad Name': 'v' } }))).toMatchObject({ param: 'config.headers' });
    expect(refusal(() => checkDrainConfig('datadog', { api_key: 'k', region: 'MARS' })).message).toBe('config.region must be one of AP1, AP2, EU, US1, US1-FED, US3, US5.');
    expect(refusal(() => checkDrainConfig('datadog', { region: 'EU' }))).toMatchObject({ param: 'config.api_key' });
    expect(refusal(() => checkDrainConfig('otlp', { endpoint: 'http://x', protocol: 'grpc' }))).toMatchObject({ param: 'config.protocol' });
    for (const type of ['s3', 'sentry', 'axiom', 'last9', 'syslog']) {
      expect(refusal(() => checkDrainType(type))).toMatchObject({
        code: 'invalid_parameter',
        status: 400,
        param: 'type',
        message: `The type "${type}" is not forwarded to by this server; the supported types are webhook, datadog, loki, otlp.`,
      });
    }
    expect(refusal(() => checkDrainType(undefined)).message).toBe('The type missing is not a drain type; the supported types are webhook, datadog, loki, otlp.');
  });
});

describe('LQL of rules', () => {
  const event = { event_message: 'GET /auth/v1/token 500 upstream error', metadata: { level: 'error', status: 500, context: [{ host: 'db-1' }, { host: 'db-2' }] } };

  it('~".*?" is every event; a message regex, a phrase, m.field:value, a field regex and number comparisons match as Logflare does', () => {
    expect(parseLql('~".*?"')({})).toBe(true);
    expect(parseLql('~"upstream\\s+error"')(event)).toBe(true);
    expect(parseLql('~"^POST"')(event)).toBe(false);
    expect(parseLql('upstream')(event)).toBe(true);
    expect(parseLql('"token 500"')(event)).toBe(true);
    expect(parseLql('m.level:error')(event)).toBe(true);
    expect(parseLql('metadata.level:warn')(event)).toBe(false);
    expect(parseLql('m.status:500')(event)).toBe(true);
    expect(parseLql('m.status:>=500')(event)).toBe(true);
    expect(parseLql('m.status:<500')(event)).toBe(false);
    expect(parseLql('m.context.host:db-2')(event)).toBe(true);
    expect(parseLql('m.context.host:~"^db-\\d$"')(event)).toBe(true);
    expect(parseLql('~"GET" m.level:error')(event)).toBe(true);
    expect(parseLql('~"GET" m.level:info')(event)).toBe(false);
  });

  it('tells a rule of every event (what Studio sends), which needs no event read', () => {
    expect(['~".*?"', ' ~".*" '].map(isEveryEvent)).toEqual([true, true]);
    expect(['~".+"', '~"error"', 'm.level:error', '~".*?" m.level:error'].map(isEveryEvent)).toEqual([false, false, false, false]);
  });

  it('refuses what it does not support with a 400 naming the supported forms', () => {
    for (const lql of ['', '-m.level:error', 'c:count(*)', 't:>now-1d', 'level:error', '~"(unclosed"', 'm.level:error OR m.level:warn', '~"open']) {
      const error = refusal(() => parseLql(lql));
      expect(error).toMatchObject({ code: 'invalid_parameter', status: 400, param: 'lql_string' });
      expect(error.message).toContain('Supported: ~".*?" (every event)');
    }
  });
});

describe('the drain store', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('le-drains-');
  });
  afterEach(() => tmp.cleanup());

  it('keeps drains and rules in the data dir: a new store reads them back; a deleted drain and its rules are gone after a reopen too', async () => {
    const store = await DrainStore.open({ dataDir: tmp.dir, sources: SOURCES, now: NOW });
    const drain = await store.create(WEBHOOK);
    expect(drain).toMatchObject({ id: 1, name: 'hook', description: 'mine', type: 'webhook', metadata: { type: 'log-drain' }, inserted_at: '2026-11-29T10:00:00.000Z' });
    expect(drain.token).toMatch(/^[0-9a-f-]{36}$/);
    const rule = await store.addRule({ backend_id: drain.id, lql_string: '~".*?"', source_id: AUTH.logflare.id });
    expect(rule).toMatchObject({ id: 2, backend_id: 1, source_id: AUTH.logflare.id, lql_string: '~".*?"' });
    const other = await store.create({ ...WEBHOOK, name: 'other' });

    const reopened = await DrainStore.open({ dataDir: tmp.dir, sources: SOURCES, now: NOW });
    expect(reopened.list('log-drain')).toEqual([drain, other]);
    expect(reopened.rules()).toEqual([rule]);
    expect(reopened.sourceOf(rule)).toBe('authLogs');

    await reopened.remove(drain.token);
    expect(() => reopened.get(drain.token)).toThrow(NotFoundError);
    const again = await DrainStore.open({ dataDir: tmp.dir, sources: SOURCES, now: NOW });
    expect(again.list()).toEqual([other]);
    expect(again.rules()).toEqual([]);
    // Ids are never reused.
    expect((await again.create(WEBHOOK)).id).toBe(4);
  });

  it("writes the drains file for its owner alone: it holds receivers' secrets", async () => {
    const store = await DrainStore.open({ dataDir: tmp.dir, sources: SOURCES, now: NOW });
    await store.create({ name: 'dd', type: 'datadog', config: { api_key: 'dd-secret', region: 'US1' }, metadata: { type: 'log-drain' } });
    const file = join(tmp.dir, DRAINS_FILE);
    expect(readFileSync(file, 'utf8')).toContain('dd-secret');
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
  });

  it('answers secrets as "REDACTED"; an update sending "REDACTED" (or leaving a header out) keeps the stored secret, and one without metadata keeps it', async () => {
    const store = await DrainStore.open({ dataDir: tmp.dir, sources: SOURCES, now: NOW });
    const drain = await store.create(WEBHOOK);
    expect(publicDrain(drain).config).toEqual({ url: 'http://collector:8080/in', http: 'http1', gzip: true, headers: { 'X-Secret': 'REDACTED' } });
    const shown = publicDrain(drain) as { config: Record<string, unknown> };
    const updated = await store.update(drain.token, { name: 'renamed', description: 'mine', type: 'webhook', config: shown.config });
    expect(updated.config).toEqual(drain.config);
    expect(updated.metadata).toEqual({ type: 'log-drain' });
    expect(updated.name).toBe('renamed');
    const withoutHeaders = await store.update(drain.token, { config: { url: 'http://collector:9090/in', gzip: false } });
    expect(withoutHeaders.config).toEqual({ url: 'http://collector:9090/in', http: 'http1', gzip: false, headers: { 'X-Secret': 's3cret' } });
    // Studio leaves the redacted headers out of its PUT: those not sent are kept, a new one added, one sent empty removed.
    expect((await store.update(drain.token, { config: { url: 'http://collector:9090/in', headers: { 'X-New': 'v' } } })).config).toMatchObject({ headers: { 'X-Secret': 's3cret', 'X-New': 'v' } });
    expect((await store.update(drain.token, { config: { url: 'http://collector:9090/in', headers: { 'X-Secret': '' } } })).config).toMatchObject({ headers: { 'X-New': 'v' } });

    const dd = await store.create({ name: 'dd', type: 'datadog', config: { api_key: 'dd-key', region: 'EU' }, metadata: { type: 'log-drain' } });
    expect(publicDrain(dd).config).toEqual({ api_key: 'REDACTED', region: 'EU' });
    expect((await store.update(dd.token, { config: { api_key: 'REDACTED', region: 'US5' } })).config).toEqual({ api_key: 'dd-key', region: 'US5' });
    const loki = await store.create({ name: 'loki', type: 'loki', config: { url: 'http://loki:3100/loki/api/v1/push', username: 'u', password: 'pw' } });
    expect(publicDrain(loki).config).toEqual({ url: 'http://loki:3100/loki/api/v1/push', username: 'u', password: 'REDACTED', headers: {} });
    // What is kept on disk is the secret itself (the data dir is the server's own).
    expect(JSON.parse(readFileSync(tmp.path(DRAINS_FILE), 'utf8')).drains.map((d: { config: unknown }) => d.config)).toContainEqual({ api_key: 'dd-key', region: 'US5' });
  });

  it('refuses a rule naming no source, no drain or an unsupported LQL, and keeps nothing of it', async () => {
    const store = await DrainStore.open({ dataDir: tmp.dir, sources: SOURCES, now: NOW });
    const drain = await store.create(WEBHOOK);
    await expect(store.addRule({ backend_id: drain.id, lql_string: '~".*?"', source_id: 'no-such-source' })).rejects.toMatchObject({ param: 'source_id', status: 400 });
    await expect(store.addRule({ backend_id: 99, lql_string: '~".*?"', source_id: AUTH.logflare.id })).rejects.toMatchObject({ param: 'backend_id', status: 400 });
    await expect(store.addRule({ backend_id: drain.id, lql_string: 'c:count(*)', source_id: AUTH.logflare.id })).rejects.toMatchObject({ param: 'lql_string', status: 400 });
    expect(store.rules()).toEqual([]);
    // A source may also be named as ingest names it.
    expect((await store.addRule({ backend_id: drain.token, lql_string: '~".*?"', source_id: 'GoTrue.logs.prod' })).source_id).toBe(AUTH.logflare.id);
  });

  it('a change that cannot be written changes nothing', async () => {
    const store = await DrainStore.open({ dataDir: tmp.path('missing', 'dir'), sources: SOURCES, now: NOW });
    await expect(store.create(WEBHOOK)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(store.list()).toEqual([]);
  });

  it('in memory without a data dir; a drains file that does not read is an error naming it at open, never emptied', async () => {
    const memory = await DrainStore.open({ sources: SOURCES, now: NOW });
    await memory.create(WEBHOOK);
    expect(memory.list()).toHaveLength(1);
    writeFileSync(tmp.path(DRAINS_FILE), '{"version": 1, "drains": [');
    const error = await DrainStore.open({ dataDir: tmp.dir, sources: SOURCES }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toContain(DRAINS_FILE);
    expect(readFileSync(tmp.path(DRAINS_FILE), 'utf8')).toBe('{"version": 1, "drains": [');
  });
});
