import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BIGINT, BLOB, BOOLEAN, blobValue, type DuckDBConnection, type DuckDBInstance, type DuckDBPreparedStatement } from '@duckdb/node-api';
import type { SourceDescriptor, SourceName } from '../sources/source-descriptor';
import type { SourceSet } from '../sources/source-set';
import { declaredColumns, ndjsonTextRelation, relationColumns, sourceRelation } from '../duckdb/source-relations';
import { columnName } from '../sql/column-name';
import { stageRowsSql } from '../duckdb/staged-rows';
import { sqlString } from '../duckdb/sql-literal';
import { hasHeads, HEAD_ROWS_PER_PROJECT } from '../dataset/newest-heads';
import { EngineError } from '../errors';
import { isTypedCounts } from '../sources/typed-hourly';
import type { Micros } from '../time/iso';
import { widenedSpan, type EventSpan } from '../time/event-span';
import type { GroupKnown } from '../ingest/body-lines';

/** Whether a source's memory keeps a newest table: the sources whose compacted files have heads. */
const hasNewest = hasHeads;

/** NDJSON bytes mirrored in memory at most; past it new segments are read from their files. */
const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;

/**
 * NDJSON bytes of one joined INSERT at most (a group larger alone goes alone). DuckDB parses the
 * lines' JSON to insert them, at up to ten times their bytes for events of many keys (an 11 MB
 * event of 650,000 keys: 125 MB): five such requests joined took the process past 1 GB.
 */
const MAX_JOINED_BYTES = 8 * 1024 * 1024;

/** The folder of a data dir that holds the memory tables' database file, rebuilt at every start. */
export const MEMORY_TABLES_DIR = '.memory-tables';

/**
 * The tables' database file in that folder. DuckDB keeps no log of it (see `ATTACH_OPTIONS`); a
 * `<file>.wal` beside it is an older version's, removed with it.
 */
const TABLES_FILE = 'tables.duckdb';

/** The name the tables' database is attached under in the engine's DuckDB. */
const DATABASE = 'le_memory';

/**
 * Bytes of a block of the tables' database. A DuckDB table holds each column's rows in segments
 * of one block each, one per column and row group whatever the rows: in an in-memory database a
 * block is 256 KiB (its size cannot be set there), so the ten tables of the Supabase sources held
 * 50-79 MiB while their rows were 10-20 MiB of NDJSON. In a database file the block size is an
 * option: at 16 KiB the same tables held 3-16 MiB (docs/performance.md, "The memory tables in a
 * database file of small blocks").
 */
const BLOCK_SIZE = 16 * 1024;

/**
 * Rows of a row group of the tables' database (DuckDB's default: 122,880). Rows go in at the end
 * of a table and leave by segment; with the default, an insert's CPU grew with the rows held (30,000
 * to 300,000: 35 to 40 - 50 µs an event), as if each checkpoint (every CHECKPOINT_BYTES) rewrote the
 * table's last row group whole to add a few thousand rows. At 8,192 it no longer grows
 * (docs/performance.md, "Ingest's own CPU per event").
 */
const ROW_GROUP_SIZE = 8192;

/**
 * How the tables' file is attached: small blocks and row groups (above), and without DuckDB's own
 * log of the file (`RECOVERY_MODE no_wal_writes`). That log wrote every insert's rows a second
 * time, with an fsync, at each COMMIT, and protected nothing: the file is removed at every start
 * and never read back; the write-ahead log is the events' durable copy. Without it the memory
 * tables write 66 - 69 % fewer bytes, and their insert took 3 - 24 % less CPU an event in five
 * rounds of six (docs/performance.md, "The memory tables' file without DuckDB's own log, again").
 * DuckDB also checkpoints a file by itself when its log passes `checkpoint_threshold`; with no log
 * only CHECKPOINT_BYTES checkpoints the tables, which it did first anyway (2 MiB of NDJSON, long
 * before 16 MiB of log).
 */
const ATTACH_OPTIONS = `BLOCK_SIZE ${BLOCK_SIZE}, ROW_GROUP_SIZE ${ROW_GROUP_SIZE}, RECOVERY_MODE no_wal_writes`;

/** The table of a source's uncompacted events, named after its relation. */
function tableOf(source: SourceDescriptor): string {
  return `${DATABASE}.${source.relation}`;
}

/**
 * The table of a source's newest events per segment and project (sources with heads:
 * logs.all's gateway log): every segment's HEAD_ROWS_PER_PROJECT newest rows of each project, and
 * maybe a few more. The newest rows of a project among any set of segments are among those, so a
 * newest-first page reads this small table instead of every uncompacted event (as a compacted
 * file's head spares reading the file).
 */
function newestOf(source: SourceDescriptor): string {
  return `${DATABASE}.newest_${source.relation}`;
}

/**
 * NDJSON bytes inserted after which the tables are checkpointed. Rows go into a DuckDB table
 * uncompressed, and a checkpoint compresses them (measured in memory, before the tables had a
 * file): 60,000 gateway-like rows held 18.0 MiB as inserted and 4.5-5.0 MiB checkpointed every
 * 1,000-5,000 rows, for about 11 µs of CPU a row (docs/performance.md, "The memory tables
 * checkpointed as they fill"). Before, only a deletion checkpointed them, so at low rates they
 * held a minute or more of rows uncompressed.
 */
const CHECKPOINT_BYTES = 2 * 1024 * 1024;

/** Rows of a newest table past which it is cut back to HEAD_ROWS_PER_PROJECT per segment and project. */
const NEWEST_TRIM_ROWS = 4096;

interface WaitingGroup extends GroupKnown {
  seq: number;
  lines: Uint8Array;
}

/** Groups inserted together, and the outcome per segment once the insert ran. */
interface JoinedInsert {
  groups: WaitingGroup[];
  /** NDJSON bytes of the groups. */
  bytes: number;
  done?: Promise<Map<number, boolean>>;
}

/** A query's consistent view of one source's in-memory events (see `MemoryTables.view`). */
export interface MemoryView {
  /** Whether segment `seq` is read from memory (else from its file). */
  mirrored(seq: number): boolean;
  /** The SELECTs of the events in memory, minus the segments `covered` says the dataset holds. */
  relation(covered: (seq: number) => boolean): MemoryRelation | undefined;
}

/** The SELECTs of a source's events held in memory, with the columns of its relation as the tables' source has them: declared, then typed. */
export interface MemoryRelation {
  /** Every event. */
  rows: string;
  /**
   * The typed fields the rows hold as columns (those the source declares; the arrays flag with
   * any): a field compaction discovered is computed from `metadata` when read (source-relations.ts).
   */
  typedFields: readonly string[];
  /**
   * The oldest event timestamp (microseconds) among the rows of the segments it reads, when every
   * one of them has its span recorded (see `MemoryTables.recordSpan`): a read whose inclusive upper
   * bound is before it finds none of these rows, and leaves them out (newest-first.ts).
   */
  oldest?: Micros;
  /**
   * True when every group of the segments it reads came with ingest's word that no event's
   * `metadata` holds a `[`: the arrays flag is false on every row, and a query may run its text
   * without the arrays half (docs/definitions.md, "Typed fields").
   */
  arraysFree?: boolean;
  /**
   * A subset holding each project's HEAD_ROWS_PER_PROJECT newest events (timestamp descending,
   * then id): what a newest-first top-N of at most that many rows with no upper time bound needs.
   * Only for sources with heads.
   */
  newest?: string;
  /**
   * Per rollup held beside the rows (`heldRollups`), the SELECT of its rows for the same segments
   * and condition as `rows`: what a query reads instead of computing the rollup over them.
   */
  rollups?: Readonly<Record<string, string>>;
}

/**
 * Managed storage's events between their acknowledgement and their compaction, held in DuckDB
 * tables (a memtable; their database file, of small blocks, only spares memory: see BLOCK_SIZE):
 * the uncompacted tail of the data costs a query what a compacted one does, instead of an NDJSON
 * parse of the write-ahead segments on every query.
 *
 * The segments stay the durable copy. An acknowledged group is inserted here before its request
 * is answered, so the next query reads it. A segment is "mirrored" when all of its groups are
 * here; a segment that is not (written before a restart, a failed insert, the memory bound
 * reached) is read from its file instead, never both. Rows of a segment leave only once a dataset
 * commit covers it and every query that may have read the dataset before that commit has ended
 * (queries hold a ticket; deletions wait for older tickets), and a query leaves out the rows of
 * segments the dataset state it read covers: at every instant each event is read once.
 */
export class MemoryTables {
  private readonly mirrored = new Map<string, Set<number>>();
  private readonly broken = new Map<string, Set<number>>();
  /** Mirrored segments whose files changed on disk since (see `diverged`): never staged from here. */
  private readonly divergedSeqs = new Map<string, Set<number>>();
  private bytes = 0;
  /**
   * The oldest and newest event timestamp (microseconds) of each segment's rows (`source:seq`),
   * widened before its rows can be read (inside their insert's transaction); null once unknown (a
   * span that could not be read): a view then gives no bound for it. Goes with the segment's rows.
   */
  private readonly spans = new Map<string, EventSpan | null>();
  /**
   * Per segment (`source:seq`): whether a group of it may hold a `[` in an event's `metadata`
   * (true once one did, or came without ingest saying; never false again). Set before the insert
   * starts, so before its rows are visible.
   */
  private readonly arrays = new Map<string, boolean>();
  /** NDJSON bytes held per segment (`source:seq`), given back when the segment's rows go. */
  private readonly segmentBytes = new Map<string, number>();
  private epoch = 0;
  private readonly open = new Map<number, number>();
  private readonly retirements: Array<{ epoch: number; source: SourceName; seqs: number[] }> = [];
  private chain: Promise<unknown> = Promise.resolve();
  private connection: DuckDBConnection | null = null;
  private ready: Promise<void> | null = null;
  /** The tables exist: until then no query may name them (the first insert creates them). */
  private created = false;

  private instance: DuckDBInstance | null = null;
  /**
   * The INSERT of each source, prepared once on the serial connection and bound per group:
   * prepared for every group, it cost 7.9 ms of CPU per 100-event group instead of 6.2. Its
   * parameters are typed in the SQL: one whose type DuckDB cannot tell when preparing makes it
   * bind and plan the whole statement again on every run (about 8 ms a group).
   */
  private readonly inserts = new Map<SourceName, DuckDBPreparedStatement>();

  /** The groups of each source waiting for the next insert (see `insertJoined`). */
  private readonly waiting = new Map<SourceName, JoinedInsert>();

  /** Per source, the INSERT of each held rollup (`rollupInserts`). */
  private readonly rollupInsertsOf = new Map<string, DuckDBPreparedStatement[]>();
  /** NDJSON bytes inserted since the last checkpoint (see CHECKPOINT_BYTES). */
  private uncheckpointed = 0;
  /** A checkpoint waits on the serial connection (see `insertBatch`). */
  private checkpointQueued = false;
  /** Inserts so far (the `le_n` of each inserted batch's rows: the newest table copies a batch by it). */
  private inserts_n = 0;
  /** Rows added to each source's newest table since it was last cut back, and the segments they belong to. */
  private readonly newestGrowth = new Map<SourceName, { rows: number; seqs: Set<number> }>();

  private readonly maxBytes: number;
  private readonly folder: string;

  /**
   * A table per source of the instance (`sources`, as declared: the tables hold its relation's
   * columns, typed ones included), holding at most `maxBytes` of NDJSON in all, in a database
   * file in `folder` (whatever is there is removed when the tables are first used).
   */
  constructor(
    private readonly sources: SourceSet,
    options: { folder: string; maxBytes?: number },
  ) {
    this.folder = options.folder;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  }

  /** NDJSON bytes of the events held now (at most `maxBytes`). */
  get heldBytes(): number {
    return this.bytes;
  }

  /** The DuckDB the tables live in: the query engine's own, so queries read them in the same statement. */
  attach(instance: DuckDBInstance): void {
    this.instance = instance;
  }

  /** Holds back deletions while a query reads; call the returned function when it is done. */
  enter(): () => void {
    const epoch = this.epoch;
    this.open.set(epoch, (this.open.get(epoch) ?? 0) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const n = (this.open.get(epoch) ?? 1) - 1;
      if (n === 0) this.open.delete(epoch);
      else this.open.set(epoch, n);
      this.drain();
    };
  }

  /**
   * Inserts an acknowledged group (its NDJSON lines, in segment `seq`). Never throws: when the
   * group cannot be held in memory, its segment is read from its file from then on. `span`: the
   * oldest and newest instant of its events as every reader reads their `timestamp` (ingest's
   * `serializeBatch`); without it, the span is read from the inserted rows, a statement more.
   * `arraysFree`: no event's `metadata` holds a `[`; a query over segments whose every group said
   * so runs its text without the arrays half (`MemoryRelation.arraysFree`).
   *
   * @example
   * await memory.insert('edgeLogs', seq, lines, { span, arraysFree: true });
   */
  async insert(source: SourceName, seq: number, lines: Uint8Array, known: GroupKnown = {}): Promise<void> {
    const mirrored = this.set(this.mirrored, source);
    const broken = this.set(this.broken, source);
    if (broken.has(seq)) return;
    // A segment is mirrored only from its first group on (one written by an earlier process is
    // not), and only while the tables stay within their bound: a group past it sends its whole
    // segment to its file (as a failed insert does), so the bound holds within a segment too.
    if ((!mirrored.has(seq) && !this.isNewSegment(source, seq)) || this.bytes + lines.length > this.maxBytes) {
      mirrored.delete(seq);
      broken.add(seq);
      return;
    }
    mirrored.add(seq);
    // Counted before the insert, so groups inserted together never pass the bound together.
    this.hold(source, seq, lines.length);
    if (!(await this.insertJoined(source, seq, lines, known))) {
      this.hold(source, seq, -lines.length);
      // Read from the file from now on; what was inserted of it is left out of every query.
      mirrored.delete(seq);
      broken.add(seq);
    }
  }

  /** Counts NDJSON bytes held by a segment (given back when its rows go). */
  private hold(source: SourceName, seq: number, bytes: number): void {
    this.bytes += bytes;
    this.segmentBytes.set(`${source}:${seq}`, (this.segmentBytes.get(`${source}:${seq}`) ?? 0) + bytes);
  }

  /**
   * Holds a whole segment written by the previous process (recovered at start) so queries stop
   * parsing it: read from its file until its rows are in, from memory from then on. Never throws;
   * a segment that does not fit under the bound, or fails to go in, stays read from its file.
   */
  async load(source: SourceName, seq: number, lines: Uint8Array): Promise<void> {
    const mirrored = this.set(this.mirrored, source);
    const broken = this.set(this.broken, source);
    if (mirrored.has(seq) || broken.has(seq) || this.bytes + lines.length > this.maxBytes) return;
    // Counted at once, so two loads never overrun the bound together.
    this.bytes += lines.length;
    // Until all of its rows are in, it is read from its file and its rows in the table are left
    // out of every query (as a broken segment's): a query never reads it twice, nor half.
    broken.add(seq);
    const done = await this.serial((connection) => this.insertBatch(connection, source, [{ seq, lines }])).catch(() => new Map<number, boolean>());
    if (done.get(seq) && broken.has(seq)) {
      broken.delete(seq);
      mirrored.add(seq);
      this.segmentBytes.set(`${source}:${seq}`, lines.length);
    } else {
      this.bytes -= lines.length;
    }
  }

  /**
   * Group commit of the memory table: the groups of a source that arrive while an insert runs
   * wait together and go in as one INSERT per segment. One statement per request was the ingest's
   * biggest cost (a statement's fixed cost is paid once per batch of requests, not per request).
   * Resolves with whether the group's rows are in.
   */
  private insertJoined(source: SourceName, seq: number, lines: Uint8Array, known: GroupKnown): Promise<boolean> {
    let batch = this.waiting.get(source);
    if (!batch || (batch.groups.length > 0 && batch.bytes + lines.length > MAX_JOINED_BYTES)) {
      const joined: JoinedInsert = { groups: [], bytes: 0 };
      batch = joined;
      this.waiting.set(source, joined);
      // Taken off the waiting list when its turn comes (unless a full one was replaced): later groups form the next batch.
      joined.done = this.serial(async (connection) => {
        if (this.waiting.get(source) === joined) this.waiting.delete(source);
        return this.insertBatch(connection, source, joined.groups);
      }).catch(() => new Map<number, boolean>());
    }
    batch.groups.push({ seq, lines, ...known });
    batch.bytes += lines.length;
    return batch.done!.then((outcome) => outcome.get(seq) ?? false);
  }

  /**
   * One INSERT per segment of the batch (one as a rule), with the segment's newest rows copied to
   * the source's newest table in the same transaction (an acknowledged event is in both or in
   * neither); says per segment whether it went in.
   */
  private async insertBatch(connection: DuckDBConnection, source: SourceName, groups: readonly WaitingGroup[]): Promise<Map<number, boolean>> {
    const bySeq = new Map<number, Uint8Array[]>();
    // Each segment's span of the groups, unless one came without (then read from the rows).
    const spanOf = new Map<number, EventSpan | null>();
    // Each segment's groups: whether one may hold a `[` in metadata (said so, or not known).
    const arraysOf = new Map<number, boolean>();
    for (const { seq, lines, span, arraysFree } of groups) {
      bySeq.set(seq, [...(bySeq.get(seq) ?? []), lines]);
      const known = spanOf.get(seq);
      spanOf.set(seq, known === null || !span ? null : (widenedSpan(known, span) ?? null));
      arraysOf.set(seq, (arraysOf.get(seq) ?? false) || arraysFree !== true);
    }
    const outcome = new Map<number, boolean>();
    const d = this.sources.get(source);
    for (const [seq, parts] of bySeq) {
      let prepared = this.inserts.get(source);
      const n = ++this.inserts_n;
      // Before the insert starts (a span is recorded before COMMIT; this earlier still): a view
      // taken while it runs already says "may hold a '['", so its rows are never read by the text
      // without the arrays half once they commit. A rolled-back insert only leaves a "may".
      if (arraysOf.get(seq) || !this.arrays.has(`${d.name}:${seq}`)) this.arrays.set(`${d.name}:${seq}`, arraysOf.get(seq)!);
      try {
        if (!prepared) {
          prepared = await connection.prepare(
            `INSERT INTO ${tableOf(d)} SELECT *, CAST($le_seq AS BIGINT), CAST($le_n AS BIGINT), CAST($le_free AS BOOLEAN) FROM (${ndjsonTextRelation(d, 'le_lines')})`,
          );
          this.inserts.set(source, prepared);
        }
        prepared.bind(
          { le_lines: blobValue(parts.length === 1 ? parts[0]! : Buffer.concat(parts)), le_seq: BigInt(seq), le_n: BigInt(n), le_free: !arraysOf.get(seq) },
          { le_lines: BLOB, le_seq: BIGINT, le_n: BIGINT, le_free: BOOLEAN },
        );
        await connection.run('BEGIN TRANSACTION');
        try {
          const inserted = (await prepared.run()).rowsChanged;
          // Recorded before COMMIT makes the rows visible (see `recordSpan`).
          const span = spanOf.get(seq);
          if (span) this.recordSpan(`${d.name}:${seq}`, span);
          else await this.widenSpan(connection, d, seq, n);
          // A large insert copies only its own HEAD_ROWS_PER_PROJECT newest rows of each project:
          // the rows of an insert are all of one segment, so a row past them has that many newer
          // ones of its segment and project, and no newest-first page reads it. Copying every row
          // of joined inserts, then cutting them back, cost 9 - 20 µs of CPU an event (the DELETE
          // and the checkpoints of its deleted rows; docs/performance.md, "Ingest's own CPU per
          // event"); a small one is copied whole and cut back with others (`newestCopySql`).
          const copied = hasNewest(d) ? (await connection.run(newestCopySql(d, n, inserted))).rowsChanged : 0;
          // Each held rollup over this insert's rows, in its transaction: a query reads the rows
          // and their rollups as of one commit, both or neither (`heldRollups`).
          for (const insert of await this.rollupInserts(connection, d)) {
            insert.bind({ le_seq: BigInt(seq), le_n: BigInt(n), le_free: !arraysOf.get(seq) }, { le_seq: BIGINT, le_n: BIGINT, le_free: BOOLEAN });
            await insert.run();
          }
          await connection.run('COMMIT');
          if (hasNewest(d)) {
            const growth = this.newestGrowth.get(source) ?? { rows: 0, seqs: new Set<number>() };
            growth.rows += copied;
            growth.seqs.add(seq);
            this.newestGrowth.set(source, growth);
          }
        } catch (error) {
          await connection.run('ROLLBACK').catch(() => undefined);
          throw error;
        }
        outcome.set(seq, true);
        this.uncheckpointed += parts.reduce((n, part) => n + part.length, 0);
      } catch {
        // Prepared again for the next batch: a failure leaves no doubt about the statement.
        if (prepared) {
          this.inserts.delete(source);
          prepared.destroySync();
        }
        for (const insert of this.rollupInsertsOf.get(d.name) ?? []) insert.destroySync();
        this.rollupInsertsOf.delete(d.name);
        outcome.set(seq, false);
      }
    }
    const growth = this.newestGrowth.get(source);
    if (growth && growth.rows > NEWEST_TRIM_ROWS) await this.trimNewest(connection, d, growth.seqs);
    if (this.uncheckpointed >= CHECKPOINT_BYTES && !this.checkpointQueued) {
      // Queued behind this batch, not awaited in it: the requests of the batch are answered once
      // their rows are in, not after a checkpoint of every table.
      this.checkpointQueued = true;
      void this.serial((next) => this.checkpoint(next)).finally(() => (this.checkpointQueued = false));
    }
    return outcome;
  }

  /** Each held rollup's INSERT of one insert's rollup rows, prepared once per source on the serial connection. */
  private async rollupInserts(connection: DuckDBConnection, d: SourceDescriptor): Promise<DuckDBPreparedStatement[]> {
    let known = this.rollupInsertsOf.get(d.name);
    if (known === undefined) {
      known = [];
      for (const name of heldRollups(d)) {
        known.push(
          await connection.prepare(
            `INSERT INTO ${rollupTableOf(name)} SELECT *, CAST($le_seq AS BIGINT), CAST($le_n AS BIGINT), CAST($le_free AS BOOLEAN) FROM (${rollupOverInsert(d, name, 'le_n = CAST($le_n AS BIGINT)')})`,
          ),
        );
      }
      this.rollupInsertsOf.set(d.name, known);
    }
    return known;
  }

  /**
   * Widens segment `seq`'s recorded span (`key`: `source:seq`) by an insert's: called inside the
   * insert's transaction, so it is recorded before the rows are visible to any query and a view
   * never holds a row outside its segments' spans (a rolled-back insert only leaves a span wider
   * than needed). A span once unknown stays so.
   */
  private recordSpan(key: string, span: EventSpan): void {
    const known = this.spans.get(key);
    if (known === null) return;
    this.spans.set(key, widenedSpan(known, span)!);
  }

  /**
   * The span of insert `n`'s rows read from them, for a group given without one (a segment loaded
   * at start): `recordSpan` of what it finds. Never throws: a span that cannot be read becomes
   * unknown, and the segment is never left out by time.
   */
  private async widenSpan(connection: DuckDBConnection, d: SourceDescriptor, seq: number, n: number): Promise<void> {
    const key = `${d.name}:${seq}`;
    if (this.spans.get(key) === null) return;
    try {
      // Costs an insert 0.6 - 1.9 ms of CPU per 100-event group, prepared once or not
      // (docs/performance.md, "Memory left out of pages before it"): ingest gives the span instead.
      const reader = await connection.runAndReadAll(`SELECT epoch_us(min(timestamp)) AS oldest, epoch_us(max(timestamp)) AS newest FROM ${tableOf(d)} WHERE le_n = ${n}`);
      const [row] = reader.getRowObjects();
      const oldest = row?.oldest;
      const newest = row?.newest;
      // No timestamped row (all null, or none): nothing a time bound can select, the span unchanged.
      if (typeof oldest !== 'bigint' || typeof newest !== 'bigint') return;
      this.recordSpan(key, { oldest, newest });
    } catch {
      this.spans.set(key, null);
    }
  }

  /**
   * Compresses the rows inserted since the last checkpoint, and gives back the storage of deleted
   * ones. It fails while another transaction (a query) is open: the next insert or retirement
   * tries again.
   */
  private async checkpoint(connection: DuckDBConnection): Promise<void> {
    try {
      await connection.run(`CHECKPOINT ${DATABASE}`);
      this.uncheckpointed = 0;
    } catch {
      // Tried again after the next insert.
    }
  }

  /**
   * Cuts a newest table back to each segment's HEAD_ROWS_PER_PROJECT newest rows per project. Any
   * time is right: a row it removes has that many newer ones of its segment and project left,
   * which a newest-first page reads before it. Only the segments grown since the last cut are
   * ranked (`grown`): the others were cut then. Ranking the whole table took 3.4 ms of every
   * 1,000 gateway events inserted in groups of 1,000 with 20 segments held; the grown ones, 1.8.
   */
  private async trimNewest(connection: DuckDBConnection, d: SourceDescriptor, grown: ReadonlySet<number>): Promise<void> {
    try {
      await connection.run(`
        DELETE FROM ${newestOf(d)} WHERE rowid IN (
          SELECT rowid FROM (
            SELECT rowid, row_number() OVER (PARTITION BY le_seq, ${d.projectColumn} ORDER BY timestamp DESC, id ASC NULLS LAST) AS le_rank
            FROM ${newestOf(d)}
            WHERE le_seq IN (${[...grown].join(', ')})
          ) WHERE le_rank > ${HEAD_ROWS_PER_PROJECT}
        )`);
      this.newestGrowth.delete(d.name);
    } catch {
      // Left as it is: a newest table with more rows than needed is still right.
    }
  }

  /**
   * One query's view of a source, taken once so that a segment is read from memory or from its
   * file, never both and never neither: `mirrored(seq)` says which, and `relation(covered)` is the
   * SELECT of the events held here minus the segments the query's dataset state covers.
   */
  view(source: SourceName): MemoryView {
    const mirrored = new Set(this.mirrored.get(source) ?? []);
    const d = this.sources.get(source);
    const columns = selectedColumns(d);
    // Before the tables exist no insert has finished, so nothing acknowledged is held yet (a query
    // racing the first ingest after a start must not name a table still being created).
    const created = this.created;
    // Copied with the segments: rows inserted after the view was taken may widen a span, and are
    // no acknowledged event of this query (they are acknowledged once their insert is done).
    const spans = new Map([...mirrored].map((seq) => [`${source}:${seq}`, this.spans.get(`${source}:${seq}`)]));
    const arrays = new Map([...mirrored].map((seq) => [seq, this.arrays.get(`${source}:${seq}`)]));
    return {
      mirrored: (seq) => mirrored.has(seq),
      relation: (covered) => {
        // The segments this view holds, named: rows of a segment that goes in after the view was
        // taken (a leftover loaded at start, read from its file by this query) are in the table
        // by the time the statement runs, and must not be read twice.
        const held = [...mirrored].filter((seq) => !covered(seq));
        if (!held.length || !created) return undefined;
        const oldest = oldestOf(held.map((seq) => spans.get(`${source}:${seq}`)));
        // As the view was taken and as it is now (a retired segment's rows are gone with its entry).
        const arraysFree = held.every((seq) => arrays.get(seq) !== true && this.arrays.get(`${source}:${seq}`) !== true);
        // A group inserted into a held segment after this is read by the statement too. Run
        // without the arrays half, the statement would read only its rows without a '[': part of
        // a request acknowledged after the view. Every row of the held segments so far came with
        // the word, so reading only such rows leaves out each later group without it whole.
        const where = ` WHERE le_seq IN (${held.join(', ')})${arraysFree ? ' AND le_free' : ''}`;
        // The typed columns as held, computed once at insert: computed when read instead, every
        // query reading these rows parsed each event's metadata again for them (docs/performance.md,
        // "Typed columns held in the memory tables").
        return {
          rows: `SELECT ${columns} FROM ${tableOf(d)}${where}`,
          typedFields: d.typedFields,
          ...(oldest === undefined ? {} : { oldest }),
          ...(arraysFree ? { arraysFree } : {}),
          ...(hasNewest(d) ? { newest: `SELECT ${columns} FROM ${newestOf(d)}${where}` } : {}),
          ...(heldRollups(d).length ? { rollups: Object.fromEntries(heldRollups(d).map((name) => [name, `SELECT * EXCLUDE (le_seq, le_n, le_free) FROM ${rollupTableOf(name)}${where}`])) } : {}),
        };
      },
    };
  }

  /**
   * Compaction's staged rows file of closed segments (`segments`: seq -> the path compaction
   * reads it by, its `filename`) written from their rows here, in this DuckDB, instead of
   * compaction parsing the segments' lines again (docs/performance.md, "Footprint"). The rows
   * are the lines' own (the INSERT types them as the files are read), so the staged file, and the
   * Parquet sorted from it, are the same. Resolves false unless every segment is mirrored (each
   * of its groups in), none `diverged`, and the file written, so compaction reads the files
   * instead (writing the staged file over whatever was begun); never throws.
   *
   * Every group of a closed segment was handed to `insert` before the segment closed (each
   * append's rows are inserted as soon as it is durable, the roll comes at the next group), so
   * once the inserts queued before now are done, mirrored means all of them are in. The COPY runs
   * on a connection of its own: inserts of the active segment go on meanwhile.
   */
  async stage(source: SourceName, segments: ReadonlyMap<number, string>, rowsFile: string): Promise<boolean> {
    await this.chain.catch(() => undefined);
    const held = (): boolean => this.created && [...segments.keys()].every((seq) => this.mirrored.get(source)?.has(seq) && !this.divergedSeqs.get(source)?.has(seq));
    if (!segments.size || !this.instance || !held()) return false;
    const d = this.sources.get(source);
    const columns = declaredColumns(d).map(([name]) => name);
    const filename = `CASE le_seq ${[...segments].map(([seq, path]) => `WHEN ${seq} THEN ${sqlString(path)}`).join(' ')} END AS filename`;
    const rows = `SELECT ${[...columns, filename].join(', ')} FROM ${tableOf(d)} WHERE le_seq IN (${[...segments.keys()].join(', ')})`;
    let connection: DuckDBConnection | null = null;
    try {
      connection = await this.instance.connect();
      await connection.run(stageRowsSql(d, rows, rowsFile));
      return held();
    } catch {
      return false;
    } finally {
      connection?.closeSync();
    }
  }

  /**
   * Segment `seq`'s file no longer holds the lines inserted here: its check found bytes changed
   * on disk and set them aside (the WAL's `verify`). Queries go on reading its rows here until
   * it is compacted, as before; compaction stages it from its file as it is now (`stage`).
   */
  diverged(source: SourceName, seq: number): void {
    this.set(this.divergedSeqs, source).add(seq);
  }

  /**
   * A dataset commit now covers these segments: their rows go once every query that entered
   * before now has ended.
   */
  retire(source: SourceName, seqs: readonly number[]): void {
    const held = seqs.filter((s) => this.mirrored.get(source)?.has(s) || this.broken.get(source)?.has(s));
    if (!held.length) return;
    this.epoch++;
    this.retirements.push({ epoch: this.epoch, source, seqs: held });
    this.drain();
  }

  /** Waits for inserts and deletions in progress (tests, close). */
  async settled(): Promise<void> {
    await this.chain.catch(() => undefined);
  }

  /**
   * Closes the tables and removes their database file: it holds nothing the write-ahead log does
   * not, and would otherwise stay in the data dir until the next start removes it.
   */
  async close(): Promise<void> {
    for (const prepared of [...this.inserts.values(), ...[...this.rollupInsertsOf.values()].flat()]) prepared.destroySync();
    this.inserts.clear();
    this.rollupInsertsOf.clear();
    const connection = this.connection;
    this.connection = null;
    if (!connection) return;
    // Detached, the file is closed whatever other connections the instance still has.
    await connection.run(`DETACH ${DATABASE}`).catch(() => undefined);
    connection.closeSync();
    await this.removeFile();
  }

  /** The tables' database file (and an older version's log of it), removed at every start and at close. */
  private async removeFile(): Promise<void> {
    const file = join(this.folder, TABLES_FILE);
    await Promise.all([rm(file, { force: true }), rm(`${file}.wal`, { force: true })]);
  }

  private drain(): void {
    const oldest = this.open.size ? Math.min(...this.open.keys()) : Number.POSITIVE_INFINITY;
    while (this.retirements.length && this.retirements[0]!.epoch <= oldest) {
      const { source, seqs } = this.retirements.shift()!;
      void this.serial(async (connection) => {
        const d = this.sources.get(source);
        await connection.run('BEGIN TRANSACTION');
        try {
          await connection.run(`DELETE FROM ${tableOf(d)} WHERE le_seq IN (${seqs.join(', ')})`);
          if (hasNewest(d)) await connection.run(`DELETE FROM ${newestOf(d)} WHERE le_seq IN (${seqs.join(', ')})`);
          for (const name of heldRollups(d)) await connection.run(`DELETE FROM ${rollupTableOf(name)} WHERE le_seq IN (${seqs.join(', ')})`);
          await connection.run('COMMIT');
        } catch (error) {
          await connection.run('ROLLBACK').catch(() => undefined);
          throw error;
        }
        // Deleted rows keep their row groups in DuckDB until a checkpoint: measured in memory,
        // 500,000 rows (114 MB) deleted held all 114 MB, and the process kept 85 MiB over its
        // idle size after a minute of ingest; a checkpoint gives it back.
        await this.checkpoint(connection);
      }).then(
        () => {
          for (const seq of seqs) {
            this.mirrored.get(source)?.delete(seq);
            this.broken.get(source)?.delete(seq);
            this.divergedSeqs.get(source)?.delete(seq);
            this.spans.delete(`${source}:${seq}`);
            this.arrays.delete(`${source}:${seq}`);
            this.bytes -= this.segmentBytes.get(`${source}:${seq}`) ?? 0;
            this.segmentBytes.delete(`${source}:${seq}`);
          }
        },
        () => undefined,
      );
    }
  }

  /** The first segment this process writes to per source: older ones were written before it started. */
  private readonly firstSeq = new Map<SourceName, number>();
  private isNewSegment(source: SourceName, seq: number): boolean {
    const first = this.firstSeq.get(source);
    if (first === undefined) {
      // The first group this process writes starts a fresh segment (the WAL opens a new one).
      this.firstSeq.set(source, seq);
      return true;
    }
    return seq >= first;
  }

  /** Inserts and deletions run one at a time on a connection of their own. */
  private serial<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    const next = this.chain.then(async () => {
      const connection = await this.table();
      return work(connection);
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async table(): Promise<DuckDBConnection> {
    this.ready ??= (async () => {
      if (!this.instance) throw new EngineError('storage_failed', 'MemoryTables: not attached to a DuckDB instance');
      this.connection = await this.instance.connect();
      // A database file of small blocks (BLOCK_SIZE), holding nothing the write-ahead log does not:
      // a file a previous process left (and an older version's log of it) is removed, never read.
      await mkdir(this.folder, { recursive: true });
      await this.removeFile();
      await this.connection.run(`ATTACH ${sqlString(join(this.folder, TABLES_FILE))} AS ${DATABASE} (${ATTACH_OPTIONS})`);
      for (const source of this.sources.list) {
        const columns = relationColumns(source)
          .map(([name, type]) => `${columnName(name)} ${type}`)
          .join(', ');
        // The relation's columns, typed ones included; le_seq: the segment of each row; le_n: the
        // insert that brought it; le_free: its groups' word that no metadata holds a '[' (`view`).
        const own = 'le_seq BIGINT, le_n BIGINT, le_free BOOLEAN';
        await this.connection.run(`CREATE TABLE IF NOT EXISTS ${tableOf(source)} (${columns}, ${own})`);
        if (hasNewest(source)) await this.connection.run(`CREATE TABLE IF NOT EXISTS ${newestOf(source)} (${columns}, ${own})`);
        for (const name of heldRollups(source)) {
          await this.connection.run(
            `CREATE TABLE IF NOT EXISTS ${rollupTableOf(name)} AS SELECT *, CAST(NULL AS BIGINT) AS le_seq, CAST(NULL AS BIGINT) AS le_n, CAST(NULL AS BOOLEAN) AS le_free FROM (${rollupOverInsert(source, name, 'false')}) LIMIT 0`,
          );
        }
      }
      this.created = true;
    })();
    await this.ready;
    return this.connection!;
  }

  private set(map: Map<string, Set<number>>, source: string): Set<number> {
    let set = map.get(source);
    if (!set) map.set(source, (set = new Set()));
    return set;
  }
}

/** The INSERT copying insert `n`'s HEAD_ROWS_PER_PROJECT newest rows of each project into the source's newest table. */
function newestCopySql(d: SourceDescriptor, n: number, rows: number): string {
  const copy = `INSERT INTO ${newestOf(d)} SELECT * FROM ${tableOf(d)} WHERE le_n = ${n}`;
  // A smaller insert is copied whole and cut back with others once they add up (`trimNewest`):
  // ranking each insert cost a group of 100 events about 3 ms of CPU more, and one of 1,000 about
  // 4, than copying it and cutting the table back every NEWEST_TRIM_ROWS rows.
  if (rows <= NEWEST_TRIM_ROWS) return copy;
  return `${copy}
    QUALIFY row_number() OVER (PARTITION BY ${d.projectColumn} ORDER BY timestamp DESC, id ASC NULLS LAST) <= ${HEAD_ROWS_PER_PROJECT}`;
}

/**
 * The oldest timestamp of segments' spans, undefined unless every one is known (a segment without
 * one, or with an unknown one, may hold any timestamp).
 */
function oldestOf(spans: ReadonlyArray<EventSpan | null | undefined>): Micros | undefined {
  let oldest: Micros | undefined;
  for (const span of spans) {
    if (!span) return undefined;
    if (oldest === undefined || span.oldest < oldest) oldest = span.oldest;
  }
  return oldest;
}

/**
 * The rollups of a source the tables hold beside its rows, each insert's computed in the insert's
 * transaction: those a query computes over the uncompacted tail (statement-sql.ts, rollupRelation).
 * Computed there on every query, the gateway's three cost a query of the last hour 6 - 9 ms of
 * its 12 - 17 (22,000 events held), against 7.5 - 9 ms for the same events compacted
 * (docs/performance.md, "Rollups held beside the memory tables' rows"). The typed fields' counts
 * are not: a caller's chart reads them only from stored files, and the rest as rows.
 */
function heldRollups(d: SourceDescriptor): readonly string[] {
  let held = HELD_ROLLUPS.get(d);
  if (held === undefined) HELD_ROLLUPS.set(d, (held = Object.keys(d.rollups).filter((name) => !isTypedCounts(d.relation, name))));
  return held;
}
const HELD_ROLLUPS = new WeakMap<SourceDescriptor, readonly string[]>();

/** The table of a held rollup's rows: the rollup's columns, then the segment, insert and arrays word of the rows they count. */
function rollupTableOf(name: string): string {
  return `${DATABASE}.rollup_${name}`;
}

/**
 * A rollup's SELECT (its `rest` when it has one: what a query computes over the tail) over the
 * rows of the source's table that pass `where`, through the source's relation as queries read
 * those rows, so a held rollup's rows are the ones a query would compute.
 */
function rollupOverInsert(d: SourceDescriptor, name: string, where: string): string {
  const rollup = d.rollups[name]!;
  const relation = sourceRelation(d, {
    ndjson: [],
    parquet: [],
    parquetTypes: new Map(),
    memory: { rows: `SELECT ${selectedColumns(d)} FROM ${tableOf(d)} WHERE ${where}`, typedFields: d.typedFields },
  });
  return `WITH ${d.relation} AS (\n${relation}\n)\n${rollup.rest ?? rollup.sql}`;
}

/** The column list a view's SELECT names, per descriptor (every query of a source takes a view). */
const SELECTED = new WeakMap<SourceDescriptor, string>();

function selectedColumns(d: SourceDescriptor): string {
  let known = SELECTED.get(d);
  if (known === undefined)
    SELECTED.set(
      d,
      (known = relationColumns(d)
        .map(([name]) => columnName(name))
        .join(', ')),
    );
  return known;
}
