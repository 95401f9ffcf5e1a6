import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { requireBinary } from './integration/support/servers';
import { tempDir } from './support/log-files';

// Runs in `npm test`: what a machine without the integration suite's servers is told.
describe('integration servers that are not installed', () => {
  const tmp = tempDir('le-bin-');

  it('fail with one line naming the package to install', () => {
    const empty = [tmp.path('empty')];
    const hints: Array<[string, string]> = [
      ['redis-server', 'apt-get install -y redis-server'],
      ['clickhouse-server', 'apt-get install -y clickhouse-server'],
      ['chromium', 'apt-get install -y chromium'],
    ];
    for (const [name, install] of hints) {
      let message = '';
      try {
        requireBinary(name, empty);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toBe(`${name} is not installed; the integration tests need it. Install it with: ${install}`);
      expect(message).not.toContain('\n');
    }
  });

  it('are found when present in one of the folders searched', () => {
    mkdirSync(tmp.path('bin'));
    const file = tmp.path('bin', 'redis-server');
    writeFileSync(file, '#!/bin/sh\n');
    chmodSync(file, 0o755);
    expect(requireBinary('redis-server', [tmp.path('empty'), tmp.path('bin')])).toBe(file);
  });

  afterAll(() => tmp.cleanup());
});
