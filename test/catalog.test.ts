import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidOptionError, type Endpoints } from '../src/index';
import { edgeEvent, endpointsAt, functionEvent, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';

describe('ep.catalog()', () => {
  const tmp = tempDir('le-catalog-');
  let ep: Endpoints;

  beforeAll(async () => {
    writeLines(tmp.path('edge', 'a.ndjson'), [
      edgeEvent({ project: 'busy', timestamp: '2026-11-21T11:00:00Z' }),
      edgeEvent({ project: 'busy', timestamp: '2026-11-21T11:30:00Z' }),
      edgeEvent({ project: 'quiet', timestamp: '2026-11-20T13:00:00Z' }),
      // Older than the default 7 days: not in the default catalog.
      edgeEvent({ project: 'old', timestamp: '2026-11-10T12:00:00Z' }),
    ]);
    writeLines(tmp.path('fn', 'a.ndjson'), [
      functionEvent({ project: 'busy', functionId: 'f-1', timestamp: '2026-11-21T11:59:00Z', ms: 1 }),
      functionEvent({ project: 'busy', functionId: 'f-2', timestamp: '2026-11-21T11:00:00Z', ms: 1 }),
      functionEvent({ project: 'busy', functionId: 'f-2', timestamp: '2026-11-21T11:01:00Z', ms: 1 }),
      functionEvent({ project: 'fn-only', functionId: 'f-9', timestamp: '2026-11-21T10:00:00Z', ms: 1 }),
    ]);
    ({ ep } = await endpointsAt({ edgeLogs: tmp.path('edge', '*.ndjson'), functionEdgeLogs: tmp.path('fn', '*.ndjson') }, NOW));
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  it('lists the projects of both logs, busiest first, with their functions busiest first', async () => {
    const catalog = await ep.catalog();
    expect(catalog.since).toBe('2026-11-14T12:00:00.000000Z');
    expect(catalog.projects).toEqual([
      { project: 'busy', requests: 2, invocations: 3, functionIds: ['f-2', 'f-1'], lastSeen: '2026-11-21T11:59:00.000000Z' },
      { project: 'quiet', requests: 1, invocations: 0, functionIds: [], lastSeen: '2026-11-20T13:00:00.000000Z' },
      { project: 'fn-only', requests: 0, invocations: 1, functionIds: ['f-9'], lastSeen: '2026-11-21T10:00:00.000000Z' },
    ]);
  });

  it('looks back as many days as asked, and refuses a window it cannot mean', async () => {
    expect((await ep.catalog({ days: 1 })).projects.map((p) => p.project)).toEqual(['busy', 'quiet', 'fn-only']);
    expect((await ep.catalog({ days: 30 })).projects.map((p) => p.project)).toContain('old');
    await expect(ep.catalog({ days: 0 })).rejects.toThrow(InvalidOptionError);
    await expect(ep.catalog({ days: 91 })).rejects.toThrow(/1 to 90/);
  });
});
