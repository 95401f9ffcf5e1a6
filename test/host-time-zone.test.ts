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

  // docs/semantics.md, "Windows and the clock": windows are cut in UTC. A day truncated in New York
  // across its change to daylight saving, or in India's half-hour offset, is the UTC day.
  it.each(['America/New_York', 'Asia/Kolkata', 'UTC'])('on a host in %s, windows are truncated and moved in UTC, as plain Dates', (zone) => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'test/support/host-time-zone-units-probe.ts'], { env: { ...process.env, TZ: zone }, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({
      day: '2026-03-08T00:00:00.000Z',
      hour: '2026-03-08T06:00:00.000Z',
      plusDay: '2026-03-09T06:30:00.000Z',
      plusHours: '2026-03-08T08:30:00.000Z',
      minusDay: '2026-03-08T06:30:00.000Z',
      minusHours: '2026-03-07T06:30:00.000Z',
      plain: true,
    });
  });
});
