import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SourceName } from '../sources/source-descriptor';
import type { SourceRules } from './drain-rules';
import { InvalidOptionError } from '../errors';
import { isCode, unlinkIfPresent, writeFileAtomic } from '../util/durable-fs';

/** Where a drain has got to in a source's write-ahead log: every event before this byte of this segment is delivered. */
export interface LogPosition {
  seq: number;
  offset: number;
}

/** Events of a drain dropped while no forwarder ran (the offline `ingest --data-dir`): kept in its cursor until a server counts them. */
export interface UnreportedDrop {
  events: number;
  /** Why the last of them went. */
  why: string;
}

/** A drain's cursor as read: its position in each source its rules name, its rules, and the drops not yet counted. */
export interface DrainCursor {
  positions: Map<SourceName, LogPosition>;
  /**
   * Its rules' LQL per source they name (null: every source, a cursor written before its rules
   * were read; a source's null: its rules unknown, a cursor of a version that kept the sources only).
   */
  rules: Map<SourceName, SourceRules | null> | null;
  dropped: UnreportedDrop | null;
}

/** The folder of a data dir that keeps each drain's cursor: `drain-cursors/<drain id>.json`. */
export const CURSORS_DIR = 'drain-cursors';

const NAME = /^(\d+)\.json$/;

/**
 * Each drain's cursor, one file per drain holding its position in every source's log, its rules
 * per source they name (nothing of another source is kept for it, and a drop while no forwarder
 * runs counts the events they match), and the events dropped while no forwarder counted them; written whole (fsynced and renamed: a crash
 * leaves the old or the new one) after each batch a receiver took (docs/supabase.md, "Log Drains").
 *
 * @example
 * await writeCursor('./data', 3, new Map([['authLogs', { seq: 12, offset: 4096 }]]));
 * (await readCursors('./data')).get(3)?.positions; // Map { 'authLogs' => { seq: 12, offset: 4096 } }
 */
export async function readCursors(dataDir: string): Promise<Map<number, DrainCursor>> {
  const dir = join(dataDir, CURSORS_DIR);
  const out = new Map<number, DrainCursor>();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (isCode(error, 'ENOENT')) return out;
    throw error;
  }
  for (const name of names) {
    const id = NAME.exec(name)?.[1];
    if (id === undefined) continue;
    const file = join(dir, name);
    out.set(Number(id), checkCursor(await readFile(file, 'utf8'), file));
  }
  return out;
}

/** `readCursors`'s example. */
export async function writeCursor(
  dataDir: string,
  drain: number,
  positions: ReadonlyMap<SourceName, LogPosition>,
  rules: ReadonlyMap<SourceName, SourceRules | null> | null = null,
  dropped: UnreportedDrop | null = null,
): Promise<void> {
  const dir = join(dataDir, CURSORS_DIR);
  await mkdir(dir, { recursive: true });
  // `reads` (the sources) as before, so a cursor stays readable by the version that wrote only it.
  const named = rules ? { reads: [...rules.keys()], rules: Object.fromEntries([...rules].filter(([, lql]) => lql !== null)) } : {};
  const cursor = { version: 1, sources: Object.fromEntries(positions), ...named, ...(dropped ? { dropped } : {}) };
  await writeFileAtomic(join(dir, `${drain}.json`), `${JSON.stringify(cursor)}\n`, 'replace');
}

/** A deleted drain's cursor gone (one already gone is fine). */
export async function removeCursor(dataDir: string, drain: number): Promise<void> {
  await unlinkIfPresent(join(dataDir, CURSORS_DIR, `${drain}.json`));
}

function checkCursor(text: string, file: string): DrainCursor {
  let value: { version?: unknown; sources?: unknown; reads?: unknown; rules?: Record<string, unknown>; dropped?: { events?: unknown; why?: unknown } };
  try {
    value = JSON.parse(text) as typeof value;
  } catch (error) {
    throw new InvalidOptionError('storage.dataDir', `The drain cursor ${file} does not read (${(error as Error).message}); fix or remove it.`, { cause: error });
  }
  const sources = value?.sources;
  if (value?.version !== 1 || typeof sources !== 'object' || sources === null) {
    throw new InvalidOptionError('storage.dataDir', `The drain cursor ${file} is not one this version writes (version 1); fix or remove it.`);
  }
  const out = new Map<SourceName, LogPosition>();
  for (const [source, at] of Object.entries(sources as Record<string, { seq?: unknown; offset?: unknown }>)) {
    if (Number.isSafeInteger(at?.seq) && Number.isSafeInteger(at?.offset)) out.set(source as SourceName, { seq: at.seq as number, offset: at.offset as number });
  }
  const dropped = value.dropped;
  const events = dropped?.events;
  const lqlOf = (source: string): SourceRules | null => {
    const lql = value.rules?.[source];
    return Array.isArray(lql) && lql.every((l) => typeof l === 'string') ? (lql as string[]) : null;
  };
  return {
    positions: out,
    rules: Array.isArray(value.reads) ? new Map(value.reads.filter((s): s is SourceName => typeof s === 'string').map((s) => [s, lqlOf(s)])) : null,
    dropped: Number.isSafeInteger(events) && (events as number) > 0 ? { events: events as number, why: typeof dropped?.why === 'string' ? dropped.why : 'dropped' } : null,
  };
}
