import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/durable-fs';
import { EngineError } from '../errors';

const ID = /^[0-9a-f]{32}$/;

/**
 * The data dir's own id (`<dataDir>/instance-id`, 32 hex digits), made once and kept: segment
 * numbers are unique within a data dir only, so what is shipped elsewhere is named by both. A new
 * data dir (or one emptied and started over) gets a new id, so its segments never pass for
 * another's. A damaged file is an error, never silently replaced: a new id would make segments
 * already half shipped look new.
 *
 * @example
 * const id = await dataDirInstanceId('./data'); // '5f0c…'
 */
export async function dataDirInstanceId(dataDir: string): Promise<string> {
  const path = join(dataDir, 'instance-id');
  await mkdir(dataDir, { recursive: true });
  const existing = await readId(path);
  if (existing !== null) return existing;
  // `create`: should two starts race (the data dir lock forbids it), both end up with one id.
  await writeFileAtomic(path, `${randomBytes(16).toString('hex')}\n`, 'create');
  const id = await readId(path);
  if (id === null) throw new EngineError('storage_failed', `${path} could not be created.`);
  return id;
}

async function readId(path: string): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const id = text.trim();
  if (!ID.test(id)) {
    throw new EngineError('storage_failed', `${path} is damaged (it should hold 32 hex digits): restore it, or ship what is left of the data dir before replacing it.`);
  }
  return id;
}
