import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tempDir } from './support/log-files';

// docs/semantics.md, "Timestamps": an offset in a timestamp is applied and every instant is UTC,
// whatever time zone the host runs in. DuckDB's TimeZone setting is per connection unless set for
// the instance; a library embedded on a laptop in New York must answer what a UTC container does.

describe('the host time zone', () => {
  it.each(['America/New_York', 'Asia/Kolkata', 'UTC'])('on a host in %s, events with offsets read back at their UTC instants', (zone) => {
    const tmp = tempDir('le-host-tz-');
    try {
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'test/support/host-time-zone-probe.ts', tmp.path('data')], { env: { ...process.env, TZ: zone }, encoding: 'utf8' });
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).toEqual([
        { id: 'minus-five', timestamp: Date.parse('2026-11-21T08:30:00.250Z') * 1000, text: '2026-11-21T08:30:00' },
        { id: 'plus-two', timestamp: Date.parse('2026-11-21T08:00:00Z') * 1000, text: '2026-11-21T08:00:00' },
      ]);
    } finally {
      tmp.cleanup();
    }
  });
});
