import { addUnits, subtractSpan, truncate } from '../../src/time/units';

/**
 * Run by test/host-time-zone.test.ts in a process of its own, with the host's time zone set by
 * `TZ`: prints, as JSON, the window arithmetic of src/time/units.ts around New York's change to
 * daylight saving time (2026-03-08 07:00 UTC) and India's half-hour offset, as ISO strings.
 */
const at = new Date('2026-03-08T06:30:00.000Z');
process.stdout.write(
  JSON.stringify({
    day: truncate(at, 'day').toISOString(),
    hour: truncate(new Date('2026-03-08T06:45:10Z'), 'hour').toISOString(),
    plusDay: addUnits(at, 'day', 1).toISOString(),
    plusHours: addUnits(at, 'hour', 2).toISOString(),
    minusDay: subtractSpan(new Date('2026-03-09T06:30:00Z'), { days: 1 }).toISOString(),
    minusHours: subtractSpan(at, { hours: 24 }).toISOString(),
    plain: truncate(at, 'day').constructor === Date,
  }),
);
