import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BackgroundCompactor, type BackgroundCompactorOptions, type CompactableLog } from '../../src/managed/background-compactor';
import { BUILT_IN_SOURCE_SET, edgeLogs } from '../../src/sources/built-ins';
import { writeLines } from './log-files';

/** A write-ahead log stand-in: closed segments are files in a folder. */
export function fakeLog(dir: string): CompactableLog & { add(name: string, events: ReadonlyArray<object | string>): void; close(): void } {
  const listeners = new Set<() => void>();
  const closed: string[] = [];
  return {
    add(name, events) {
      closed.push(writeLines(join(dir, name), [...events, { _wal_commit: { seq: 1, bytes: 0, crc32: 0 } }]));
    },
    close: () => listeners.forEach((l) => l()),
    closedSegments: () => closed.filter((p) => existsSync(p)).map((path) => ({ path })),
    release: async (paths) => {
      for (const p of paths) rmSync(p, { force: true });
    },
    onSegmentClosed(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** A background compactor of the gateway log over `wal`, keeping 90 days unless told otherwise. */
export function gatewayCompactor(options: Pick<BackgroundCompactorOptions, 'datasetDir' | 'walDir' | 'wal' | 'now' | 'onError'> & Partial<BackgroundCompactorOptions>): BackgroundCompactor {
  return new BackgroundCompactor({ source: edgeLogs, sources: BUILT_IN_SOURCE_SET, retentionDays: 90, ...options });
}
