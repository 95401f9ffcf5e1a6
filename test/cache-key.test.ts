import { describe, expect, it } from 'vitest';
import { cacheKey } from '../src/cache/cache-key';
import { normalizeParams } from '../src/definitions/params';
import { findDefinition } from '../src/definitions/registry';

const key = (nameOrId: string, raw: Record<string, unknown>) => {
  const definition = findDefinition(nameOrId);
  return cacheKey(definition, normalizeParams(definition, raw));
};

describe('cache key', () => {
  it('is the same by name and by UUID (any letter case)', () => {
    const byName = key('usage.api-counts', { project: 'abc', interval: 'daily' });
    expect(key('538d9361-e1e6-421a-953a-37a46d1b9e19', { project: 'abc', interval: 'daily' })).toBe(byName);
    expect(key('538D9361-E1E6-421A-953A-37A46D1B9E19', { project: 'abc', interval: 'daily' })).toBe(byName);
  });

  it('ignores unknown parameters and treats absent like empty', () => {
    const base = key('functions.invocation-stats', { project: 'abc', interval: '1hr' });
    expect(key('functions.invocation-stats', { project: 'abc', interval: '1hr', foo: 'bar', limit: '5' })).toBe(base);
    expect(key('functions.invocation-stats', { project: 'abc', interval: '1hr', function_id: '' })).toBe(base);
    expect(key('functions.invocation-stats', { interval: '1hr', project: 'abc' })).toBe(base);
  });

  it('keys an interval that behaves like 1day as 1day', () => {
    const oneDay = key('functions.invocation-stats', { project: 'abc', interval: '1day' });
    expect(key('functions.invocation-stats', { project: 'abc', interval: 'fortnight' })).toBe(oneDay);
  });

  it('differs when a declared parameter or the endpoint differs', () => {
    const keys = new Set([
      key('functions.invocation-stats', { project: 'abc', interval: '1hr' }),
      key('functions.invocation-stats', { project: 'abd', interval: '1hr' }),
      key('functions.invocation-stats', { project: 'abc', interval: '1day' }),
      key('functions.invocation-stats', { project: 'abc', interval: '1hr', function_id: 'f1' }),
      key('usage.api-counts', { project: 'abc', interval: 'hourly' }),
    ]);
    expect(keys.size).toBe(5);
  });

  it('cannot be confused by values that contain separators', () => {
    const a = key('functions.invocation-stats', { project: 'a","b', interval: '1hr' });
    const b = key('functions.invocation-stats', { project: 'a', function_id: 'b', interval: '1hr' });
    expect(a).not.toBe(b);
  });

  it('keys timestamps in their canonical form', () => {
    const z = key('logs.all', { project: 'abc', project_tier: 'PRO', iso_timestamp_start: '2026-11-21T10:00:00Z' });
    expect(key('logs.all', { project: 'abc', project_tier: 'PRO', iso_timestamp_start: '2026-11-21T12:00:00+02:00' })).toBe(z);
  });
});
