import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tempDir } from './support/log-files';

// docs/ingest.md, "Footprint": nothing the library does in a process reaches ICU's locale data. One
// Intl formatter built when a module loads reads several MiB of it into the process, and keeps
// them: the server held 9 - 10 MiB more at idle when a date package did so.

describe('locale data', () => {
  it('importing the library, ingesting and answering use no Intl formatter, toLocale... method or localeCompare', () => {
    const tmp = tempDir('le-locale-data-');
    try {
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'test/support/locale-data-probe.ts', tmp.path('data')], { encoding: 'utf8' });
      expect(run.stderr).toBe('');
      expect(JSON.parse(run.stdout)).toEqual([]);
    } finally {
      tmp.cleanup();
    }
  });
});
