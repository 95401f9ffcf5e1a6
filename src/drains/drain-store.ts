import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InvalidBodyError, InvalidOptionError, InvalidParameterError, NotFoundError } from '../errors';
import type { SourceDescriptor, SourceName } from '../sources/source-descriptor';
import { isCode, writeFileAtomic } from '../util/durable-fs';

/** The drains file holds receivers' secrets (API keys, passwords, header values): its owner's alone. */
const OWNER_ONLY = 0o600;
import { oneAtATime } from '../util/one-at-a-time';
import { checkDrainConfig, checkDrainType, redactedConfig, type DrainConfig, type DrainType } from './drain-config';
import { parseLql } from './lql';
import { systemNow } from '../time/clock';

/** The file of a data dir that keeps the drains and their rules. */
export const DRAINS_FILE = 'drains.json';

/** A drain as kept: Logflare's backend, secrets included. */
export interface StoredDrain {
  /** A number, as Logflare's backends have (rules name it as `backend_id`). */
  id: number;
  /** How Studio addresses it: `/api/backends/<token>`. */
  token: string;
  name: string;
  description: string;
  type: DrainType;
  config: DrainConfig;
  /** What the creator said of it; Studio's are `{type: 'log-drain'}`. */
  metadata: Record<string, unknown>;
  inserted_at: string;
  updated_at: string;
}

/** A rule: the events of a source that match its LQL go to a drain. */
export interface StoredRule {
  id: number;
  token: string;
  backend_id: number;
  /** The source's fixed UUID (its `id` in `GET /api/sources`). */
  source_id: string;
  lql_string: string;
}

interface State {
  version: 1;
  nextId: number;
  drains: StoredDrain[];
  rules: StoredRule[];
}

/** Options of `DrainStore.open`. */
export interface DrainStoreOptions {
  /** Where `drains.json` is kept; none keeps the drains in memory only (gone at exit). */
  dataDir?: string;
  /** The instance's sources: what rules may name. */
  sources: readonly SourceDescriptor[];
  /** The clock of `inserted_at` and `updated_at`. */
  now?: () => Date;
  /** Runs before a new drain is written (its id given): its cursor exists before it does. */
  beforeCreate?: (id: number) => Promise<void>;
}

/**
 * The drains of an instance and their rules (docs/supabase.md, "Log Drains"): checked, kept
 * durably in the data dir (the whole file written anew, fsynced and renamed, so a crash leaves the
 * old or the new one), and read back at start. One change at a time; a change that cannot be
 * written changes nothing. Listeners hear of every change (the forwarder follows them).
 *
 * @example
 * const store = await DrainStore.open({ dataDir: './data', sources: ep.sources });
 * const drain = await store.create({ name: 'hook', type: 'webhook', config: { url: 'http://collector:8080/' } });
 */
export class DrainStore {
  private readonly lane = oneAtATime();
  private readonly listeners: (() => void)[] = [];
  private readonly byRef = new Map<string, SourceDescriptor>();

  private constructor(
    private state: State,
    private readonly file: string | null,
    readonly sources: readonly SourceDescriptor[],
    private readonly now: () => Date,
    private readonly beforeCreate?: (id: number) => Promise<void>,
  ) {
    for (const source of sources) {
      this.byRef.set(source.logflare.id, source);
      this.byRef.set(source.name.toLowerCase(), source);
      for (const name of source.logflare.names) this.byRef.set(name.toLowerCase(), source);
    }
  }

  /** Reads the kept drains (none when the file is missing); a file that does not read is an error naming it, never silently emptied. */
  static async open(options: DrainStoreOptions): Promise<DrainStore> {
    const file = options.dataDir === undefined ? null : join(options.dataDir, DRAINS_FILE);
    let state: State = { version: 1, nextId: 1, drains: [], rules: [] };
    if (file !== null) {
      try {
        state = checkState(JSON.parse(await readFile(file, 'utf8')), file);
      } catch (error) {
        if (!isCode(error, 'ENOENT')) {
          if (error instanceof InvalidOptionError) throw error;
          throw new InvalidOptionError('storage.dataDir', `The drains file ${file} does not read (${(error as Error).message}); fix or remove it.`, { cause: error });
        }
      }
    }
    return new DrainStore(state, file, options.sources, options.now ?? systemNow, options.beforeCreate);
  }

  /** Calls `listener` after each change. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** The drains, oldest first; with `metadataType`, those whose `metadata.type` is it. */
  list(metadataType?: string): readonly StoredDrain[] {
    return metadataType === undefined ? this.state.drains : this.state.drains.filter((d) => d.metadata.type === metadataType);
  }

  /** Every rule. */
  rules(): readonly StoredRule[] {
    return this.state.rules;
  }

  /** A drain by its token (or its id); `NotFoundError` otherwise. */
  get(ref: string | number): StoredDrain {
    const text = String(ref).toLowerCase();
    const drain = this.state.drains.find((d) => d.token === text || String(d.id) === text);
    if (!drain) throw new NotFoundError(`No drain has the token or id "${text.slice(0, 60)}".`);
    return drain;
  }

  /** The source a rule's `source_id` names: its UUID, or a name ingest takes. */
  source(ref: unknown): SourceDescriptor {
    const source = typeof ref === 'string' ? this.byRef.get(ref.toLowerCase()) : undefined;
    if (!source) throw new InvalidParameterError('source_id', `source_id must be the id of a source (GET /api/sources lists them).`);
    return source;
  }

  /** The source a kept rule is for (by its internal name). */
  sourceOf(rule: StoredRule): SourceName | null {
    return this.byRef.get(rule.source_id)?.name ?? null;
  }

  /** A new drain from `{name, description, type, config, metadata}` (Studio's body). */
  async create(body: unknown): Promise<StoredDrain> {
    const fields = objectOf(body);
    const type = checkDrainType(fields.type);
    const drain: Omit<StoredDrain, 'id'> = {
      token: randomUUID(),
      name: requiredText(fields.name, 'name'),
      description: optionalText(fields.description, 'description'),
      type,
      config: checkDrainConfig(type, fields.config),
      metadata: metadataOf(fields.metadata) ?? {},
      inserted_at: this.now().toISOString(),
      updated_at: this.now().toISOString(),
    };
    return this.change(
      (state) => {
        const made = { id: state.nextId++, ...drain };
        state.drains.push(made);
        return made;
      },
      (made) => this.beforeCreate?.(made.id),
    );
  }

  /**
   * A drain changed: the fields given replace the kept ones (`metadata` absent keeps it, as
   * Studio sends none); a secret sent as `"REDACTED"` keeps the kept one.
   */
  async update(ref: string, body: unknown): Promise<StoredDrain> {
    const fields = objectOf(body);
    return this.change((state) => {
      const at = state.drains.findIndex((d) => d.id === this.get(ref).id);
      const old = state.drains[at]!;
      const type = fields.type === undefined ? old.type : checkDrainType(fields.type);
      const config = fields.config === undefined && type === old.type ? old.config : checkDrainConfig(type, fields.config ?? {}, type === old.type ? old.config : undefined);
      const changed: StoredDrain = {
        ...old,
        name: fields.name === undefined ? old.name : requiredText(fields.name, 'name'),
        description: fields.description === undefined ? old.description : optionalText(fields.description, 'description'),
        type,
        config,
        metadata: metadataOf(fields.metadata) ?? old.metadata,
        updated_at: this.now().toISOString(),
      };
      state.drains[at] = changed;
      return changed;
    });
  }

  /** A drain and its rules gone for good. */
  async remove(ref: string): Promise<void> {
    return this.change((state) => {
      const { id } = this.get(ref);
      state.drains = state.drains.filter((d) => d.id !== id);
      state.rules = state.rules.filter((r) => r.backend_id !== id);
    });
  }

  /** A rule from `{backend_id, lql_string, source_id}` (Studio's body); its LQL is checked first. */
  async addRule(body: unknown): Promise<StoredRule> {
    const fields = objectOf(body);
    const lql = requiredText(fields.lql_string, 'lql_string');
    parseLql(lql);
    const source = this.source(fields.source_id);
    if (fields.backend_id === undefined || fields.backend_id === null) throw new InvalidParameterError('backend_id', 'backend_id is required: the id of a drain.');
    return this.change((state) => {
      let drain: StoredDrain;
      try {
        drain = this.get(fields.backend_id as string);
      } catch (error) {
        throw new InvalidParameterError('backend_id', `backend_id: ${(error as Error).message}`);
      }
      const rule: StoredRule = { id: state.nextId++, token: randomUUID(), backend_id: drain.id, source_id: source.logflare.id, lql_string: lql };
      state.rules.push(rule);
      return rule;
    });
  }

  /** Applies a change to a copy, runs `prepare` on its result, writes it, and only then makes it the state. */
  private change<T>(apply: (state: State) => T, prepare?: (result: T) => Promise<void> | undefined): Promise<T> {
    return this.lane(async () => {
      const next: State = structuredClone(this.state);
      const result = apply(next);
      await prepare?.(result);
      if (this.file !== null) await writeFileAtomic(this.file, `${JSON.stringify(next)}\n`, 'replace', OWNER_ONLY);
      this.state = next;
      for (const listener of this.listeners) listener();
      return result;
    });
  }
}

/** A drain as answers show it: Logflare's backend with its secrets `"REDACTED"`. */
export function publicDrain(drain: StoredDrain): Record<string, unknown> {
  return { ...drain, config: redactedConfig(drain.config) };
}

function checkState(value: unknown, file: string): State {
  const state = value as Partial<State> | null;
  if (typeof state !== 'object' || state === null || state.version !== 1 || !Array.isArray(state.drains) || !Array.isArray(state.rules) || !Number.isSafeInteger(state.nextId)) {
    throw new InvalidOptionError('storage.dataDir', `The drains file ${file} is not one this version writes (version 1); fix or remove it.`);
  }
  return state as State;
}

function objectOf(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InvalidBodyError('The body must be a JSON object.');
  return body as Record<string, unknown>;
}

function requiredText(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new InvalidParameterError(field, `${field} is required (a non-empty string).`);
  if (value.length > 10_000) throw new InvalidParameterError(field, `${field} is longer than 10000 characters.`);
  return value;
}

function optionalText(value: unknown, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new InvalidParameterError(field, `${field} must be a string.`);
  if (value.length > 10_000) throw new InvalidParameterError(field, `${field} is longer than 10000 characters.`);
  return value;
}

function metadataOf(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidParameterError('metadata', 'metadata must be an object.');
  return value as Record<string, unknown>;
}
