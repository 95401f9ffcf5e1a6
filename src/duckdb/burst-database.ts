import type { DuckDBConnection } from '@duckdb/node-api';
import { openDatabase, type DatabaseSettings, type OpenDatabase } from './open-database';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/** A connection lent for one piece of work; `release(failed)` gives it back (a failed one is closed, not kept). */
export interface LentConnection {
  connection: DuckDBConnection;
  release(failed: boolean): Promise<void>;
}

/**
 * One DuckDB kept open across the back-to-back runs of a compaction burst, closed when the burst
 * ends (`close`, called by the compactor once it has caught up), so its memory comes back when
 * compaction is idle. Why: opening and closing an instance for every run of an 8 MiB segment cost
 * 0.17-0.41 s of its 2.5 s at the full ingest rate (docs/performance.md). The instance is kept
 * only as it was opened: work asking other settings (a retry at twice the memory limit) gets a new
 * one, the old one closed; a run that failed closes it (an interrupted or out-of-memory instance
 * is not trusted with the next run). It spills into `spillDirectory`, a folder of its own: DuckDB
 * refuses to move its spill folder once it used it (every run of a segment does under compaction's
 * memory share), so the runs cannot each spill into their staging folder as a run alone does; the
 * folder is emptied before each instance opens (what a killed process left in it).
 *
 * @example
 * const database = new BurstDatabase('data/.compaction-spill');
 * const { connection, release } = await database.lend({ threads: 1, memoryLimit: '80MB' }, 'data/edgeLogs/parquet/.compact-1f.tmp/spill');
 * try { await connection.run('SELECT 1'); await release(false); } catch (e) { await release(true); throw e; }
 * await database.close(); // once caught up
 */
export class BurstDatabase {
  private current: { settings: DatabaseSettings; opened: OpenDatabase } | null = null;
  private lent = 0;
  private closeWhenReturned = false;
  /** Instances opened so far (tests). */
  opens = 0;

  constructor(readonly spillDirectory: string) {}

  /** Whether an instance is open now. */
  get isOpen(): boolean {
    return this.current !== null;
  }

  /**
   * A connection under these settings: the open instance when it was opened with them, else a new
   * one. Lent already (two pieces of work at once, which no lane keeps apart), the second gets an
   * instance of its own spilling into `runSpill`, closed when it is returned.
   */
  async lend(settings: DatabaseSettings | undefined, runSpill: string): Promise<LentConnection> {
    const wanted = settings ?? {};
    if (this.lent > 0) {
      const own = await openDatabase({ ...wanted, tempDirectory: runSpill });
      return { connection: own.connection, release: () => own.close() };
    }
    if (this.current && !sameSettings(this.current.settings, wanted)) await this.closeNow();
    if (!this.current) {
      await rm(this.spillDirectory, { recursive: true, force: true });
      // DuckDB makes the folder itself when it first spills, not its parents.
      await mkdir(dirname(this.spillDirectory), { recursive: true });
      const opened = await openDatabase({ ...wanted, tempDirectory: this.spillDirectory });
      this.current = { settings: wanted, opened };
      this.opens++;
      // Footers cached across runs would grow with every file a burst writes and never be read again.
      await opened.connection.run('SET parquet_metadata_cache = false');
    }
    this.lent++;
    let returned = false;
    return {
      connection: this.current.opened.connection,
      release: async (failed) => {
        if (returned) return;
        returned = true;
        this.lent--;
        if (failed || this.closeWhenReturned) await this.closeNow();
      },
    };
  }

  /** Closes the instance (the burst is over); one lent now is closed when it is returned. */
  async close(): Promise<void> {
    if (this.lent > 0) this.closeWhenReturned = true;
    else await this.closeNow();
  }

  private async closeNow(): Promise<void> {
    const current = this.current;
    this.current = null;
    this.closeWhenReturned = false;
    await current?.opened.close();
  }
}

function sameSettings(a: DatabaseSettings, b: DatabaseSettings): boolean {
  return a.threads === b.threads && a.memoryLimit === b.memoryLimit && a.tempDirectory === b.tempDirectory && a.held === b.held;
}
