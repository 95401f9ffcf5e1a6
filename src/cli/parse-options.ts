import { parseArgs, type ParseArgsConfig } from 'node:util';
import { prepareDataDir } from '../managed/wal/prepare-data-dir';
import { parseIsoMicros } from '../time/iso';
import { UsageError } from './usage-error';

type Options = NonNullable<ParseArgsConfig['options']>;

/** `node:util` parseArgs, strict, with its errors turned into usage errors of `command`. */
export function parseOptions<T extends Options>(command: string, argv: string[], options: T, positionals = 0) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: positionals > 0, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, '.'), command);
  }
  if (parsed.positionals.length > positionals) {
    throw new UsageError(`Unexpected argument "${parsed.positionals[positionals]}".`, command);
  }
  return parsed;
}

/** The options every command reading logs shares; the sources' own flags come from the set (`sourceOptions`). */
export const SOURCE_OPTIONS = {
  config: { type: 'string' },
  'single-project': { type: 'boolean' },
  source: { type: 'string', multiple: true },
  now: { type: 'string' },
  threads: { type: 'string' },
  'memory-limit': { type: 'string' },
} as const satisfies Options;

/**
 * `--no-typed-columns`, the one flag of every command that compacts (`compact`, and `serve` /
 * `ingest` with a data dir): Parquet files with `metadata` alone (docs/durability.md, "Typed
 * columns"). Its help line is `typedColumnsHelp`'s, so each command says the same.
 */
export const TYPED_COLUMNS_OPTIONS = {
  'no-typed-columns': { type: 'boolean' },
} as const satisfies Options;

/** `--no-typed-columns` as the library's `typedColumns` option: false when given, else left to the default (or the config). */
export function typedColumnsOf(values: { 'no-typed-columns'?: boolean }): false | undefined {
  return values['no-typed-columns'] ? false : undefined;
}

/** `--threads` / `--memory-limit` as the library's `duckdb` option. */
export function duckdbOf(command: string, values: { threads?: string; 'memory-limit'?: string }) {
  const memoryLimit = values['memory-limit'];
  if (memoryLimit !== undefined && !/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.test(memoryLimit)) {
    throw new UsageError(`--memory-limit must be a size such as 256MB or 2GB, not "${memoryLimit}".`, command);
  }
  return {
    threads: values.threads === undefined ? undefined : integerOf(command, 'threads', values.threads, 0, 1, 1024),
    memoryLimit,
  };
}

/** `--now <iso>` as a fixed clock (every relative window is evaluated at that instant), or the system clock. */
export function clockOf(command: string, now: string | undefined): (() => Date) | undefined {
  if (now === undefined) return undefined;
  const micros = parseIsoMicros(now);
  if (micros === null) throw new UsageError(`--now must be an ISO 8601 timestamp such as 2026-11-21T10:00:00Z, not "${now}".`, command);
  const fixed = new Date(Number(micros / 1000n));
  return () => new Date(fixed);
}

/**
 * `--data-dir`, created when missing; a path that cannot be one is a usage error saying why (a
 * file, a parent that cannot be written), not the system's "EEXIST" or "ENOENT ... mkdir".
 */
export function dataDirOf(command: string, dataDir: string): string {
  const problem = prepareDataDir(dataDir);
  if (problem !== null) throw new UsageError(`--data-dir ${problem}.`, command);
  return dataDir;
}

/** An integer option within bounds, or its default. */
export function integerOf(command: string, name: string, text: string | undefined, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, not "${text}".`, command);
  }
  return Number(text);
}

/** Ingest-only keys from `--ingest-key` (repeatable) and the comma-separated `LOG_ENDPOINTS_INGEST_KEYS`. */
export function ingestKeysOf(flags: string[] | undefined, env: NodeJS.ProcessEnv): string[] {
  const fromEnv = (env.LOG_ENDPOINTS_INGEST_KEYS ?? '').split(',').map((k) => k.trim());
  return [...new Set([...(flags ?? []), ...fromEnv].filter((k) => k.length > 0))];
}

/** API keys from `--api-key` (repeatable) and the comma-separated `LOG_ENDPOINTS_API_KEYS`. */
export function apiKeysOf(flags: string[] | undefined, env: NodeJS.ProcessEnv): string[] {
  const fromEnv = (env.LOG_ENDPOINTS_API_KEYS ?? '').split(',').map((k) => k.trim());
  return [...new Set([...(flags ?? []), ...fromEnv].filter((k) => k.length > 0))];
}
