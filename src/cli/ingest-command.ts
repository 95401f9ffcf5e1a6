import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createGunzip, gzipSync } from 'node:zlib';
import { createEndpoints, type Endpoints } from '../api/create-endpoints';
import { DrainLog } from '../drains/drain-log';
import { InvalidBodyError, LogEndpointsError, EngineError } from '../errors';
import { DataDirLockedError } from '../dataset/data-dir-lock';
import type { SourceDescriptor } from '../sources/source-descriptor';
import type { SourceSet } from '../sources/source-set';
import { commandConfig } from './config-file';
import { combinedStorage } from './config-and-flags';
import { helpText } from './help';
import { sourceChoices } from './source-flags';
import type { CliIO } from './io';
import { apiKeysOf, ingestKeysOf, integerOf, parseOptions, TYPED_COLUMNS_OPTIONS } from './parse-options';
import { progressBar } from './progress-bar';
import { UsageError } from './usage-error';
import { monotonicMs } from '../time/clock';
import { parseExactJson, stringifyExactJson } from '../util/exact-json';

const OPTIONS = {
  source: { type: 'string' },
  config: { type: 'string' },
  'data-dir': { type: 'string' },
  url: { type: 'string' },
  'api-key': { type: 'string' },
  'batch-size': { type: 'string' },
  ...TYPED_COLUMNS_OPTIONS,
} as const;

/**
 * What `--source` names: a source of the set by its name, relation or alias, or by one of its
 * Logflare names or UUID (any letter case). With `--url` a name this command does not know is
 * left to the server, which may know more sources (null then).
 */
function sourceOf(text: string | undefined, sources: SourceSet, remote: boolean): SourceDescriptor | null {
  const found = text === undefined ? undefined : (sources.fromCli(text) ?? sources.byLogflareName(text));
  if (found) return found;
  if (remote && text) return null;
  throw new UsageError(
    `--source must name a source: ${sourceChoices(sources)}, or one of their Logflare names (${sources.list.flatMap((d) => d.logflare.names).join(', ')})${text === undefined ? '' : `, not "${text}"`}.`,
    'ingest',
  );
}

/** Batches in flight at once: enough for group commit to share fsyncs, few enough to stay small. */
const IN_FLIGHT = 4;
/** How long a batch is retried while storage answers `overloaded` (compaction catching up). */
const MAX_RETRY_MS = 5 * 60_000;
/** Refused lines and events reported one by one; the rest only counted. */
const SHOWN = 5;

/** Sends one batch; resolves when it is durable. */
type Send = (events: object[]) => Promise<void>;

/**
 * `log-endpoints ingest <file.ndjson...> --source <source>`: bulk-loads NDJSON files through the
 * one ingest path, either into a data dir (`--data-dir`, which no running server may hold) or
 * into a running server (`--url` and `--api-key`), in batches, with a progress bar on stderr.
 */
export async function ingestCommand(argv: string[], io: CliIO): Promise<number> {
  const { config, sources } = await commandConfig('ingest', argv);
  const { values, positionals } = parseOptions('ingest', argv, OPTIONS, Number.MAX_SAFE_INTEGER);
  if (values.help) {
    io.stdout.write(helpText('ingest', sources)!);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('Name the NDJSON files to ingest: log-endpoints ingest <file.ndjson...> --source <source>.', 'ingest');
  const descriptor = sourceOf(values.source, sources, values.url !== undefined);
  // What is sent as the source: its first Logflare name (what a shipper sends), else its own name; an unknown one as given.
  const source = descriptor ? (descriptor.logflare.names[0] ?? descriptor.name) : values.source!;
  if ((values['data-dir'] === undefined) === (values.url === undefined)) {
    throw new UsageError('Give exactly one destination: --data-dir <dir> (no server running on it) or --url <server> --api-key <key>.', 'ingest');
  }
  // A server compacts as it was started (serve --no-typed-columns): the flag would do nothing there.
  if (values.url !== undefined && values['no-typed-columns']) throw new UsageError('--no-typed-columns is for --data-dir: a server compacts in the layout it was started with.', 'ingest');
  const batchSize = integerOf('ingest', 'batch-size', values['batch-size'], 1000, 1, 100_000);
  const files = await Promise.all(
    positionals.map(async (file) => {
      try {
        return { file, size: (await stat(file)).size };
      } catch {
        throw new UsageError(`Cannot read ${file}.`, 'ingest');
      }
    }),
  );

  let ep: Endpoints | null = null;
  let send: Send;
  let destination: string;
  if (values['data-dir'] !== undefined) {
    try {
      // Damage recovery finds (and lines compaction sets aside) are told, as serve tells them.
      ep = await createEndpoints({
        // The config's storage options (source names, bounds...) too, by the rule of serve.
        storage: combinedStorage('ingest', values, config.storage),
        sourceDefinitions: sources.list,
        cache: false,
        onWarning: (warning) => io.stderr.write(`warning: ${warning.message}\n`),
        // No drain forwards here, but what compaction is done with stays kept for the drains the server forwards to next.
        segmentKeeper: new DrainLog(),
      });
    } catch (error) {
      if (error instanceof DataDirLockedError) {
        throw new EngineError('overloaded', `${error.message} To add events while it runs, send them through it: log-endpoints ingest ... --url <its URL> --api-key <key>.`);
      }
      throw error;
    }
    const opened = ep;
    send = (events) => retrying(() => opened.ingest(source, events).then(() => undefined));
    destination = opened.storage!.dataDir;
  } else {
    const key = values['api-key'] ?? ingestKeysOf(undefined, io.env)[0] ?? apiKeysOf(undefined, io.env)[0];
    if (!key) throw new UsageError('--url needs a key: --api-key <key> (or LOG_ENDPOINTS_INGEST_KEYS).', 'ingest');
    const endpoint = ingestUrl(values.url!, source);
    send = (events) => retrying(() => postBatch(endpoint, key, events));
    destination = values.url!;
  }

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const bar = progressBar(io.stderr, 'Ingesting');
  const total = files.reduce((sum, f) => sum + f.size, 0);
  const report = { events: 0, skipped: 0, shown: [] as string[] };
  try {
    let readBefore = 0;
    for (const { file, size } of files) {
      await loadFile(file, batchSize, send, report, stop.signal, (read) => bar.update(readBefore + read, total));
      readBefore += size;
      if (stop.signal.aborted) break;
    }
    bar.finish();
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await ep?.close();
  }
  for (const line of report.shown) io.stderr.write(`${line}\n`);
  if (report.skipped > report.shown.length) io.stderr.write(`… and ${report.skipped - report.shown.length} more.\n`);
  const skipped = report.skipped ? ` ${report.skipped} line${report.skipped === 1 ? ' was' : 's were'} skipped (see above).` : '';
  if (stop.signal.aborted) {
    io.stdout.write(`Interrupted: ${report.events} events were ingested into ${destination} (durable); the rest was not sent.${skipped}\n`);
    return 1;
  }
  io.stdout.write(`Ingested ${report.events} events from ${files.length} file${files.length === 1 ? '' : 's'} into ${destination} (${source}).${skipped}\n`);
  return 0;
}

interface Report {
  events: number;
  skipped: number;
  shown: string[];
}

/** Reads one file's lines into batches and sends them, a few at a time. */
async function loadFile(file: string, batchSize: number, send: Send, report: Report, signal: AbortSignal, progress: (read: number) => void): Promise<void> {
  const raw = createReadStream(file);
  let read = 0;
  raw.on('data', (chunk) => {
    read += chunk.length;
  });
  const text = /\.gz$/i.test(file) ? raw.pipe(createGunzip()) : raw;
  const inFlight = new Set<Promise<void>>();
  let batch: { event: object; line: number }[] = [];
  let failure: unknown = null;
  const flush = async () => {
    const items = batch;
    batch = [];
    const sent = sendSkipping(items, send, file, report).catch((error: unknown) => {
      failure ??= error;
    });
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
    while (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    if (failure) throw failure;
    progress(read);
  };
  let carry = '';
  let lineNo = 0;
  const decoder = new TextDecoder();
  const take = (line: string) => {
    lineNo++;
    const trimmed = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (trimmed.trim() === '') return;
    let value: unknown;
    try {
      // Integers past 2^53 as bigint: stored with the digits of the file.
      value = parseExactJson(lineNo === 1 ? trimmed.replace(/^\uFEFF/, '') : trimmed);
    } catch {
      value = undefined;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      skip(report, `${file}:${lineNo}: not a JSON object; skipped.`);
      return;
    }
    batch.push({ event: value, line: lineNo });
  };
  try {
    for await (const chunk of text) {
      if (signal.aborted) break;
      const lines = (carry + decoder.decode(chunk as Buffer, { stream: true })).split('\n');
      carry = lines.pop()!;
      for (const line of lines) {
        take(line);
        if (batch.length >= batchSize) await flush();
      }
    }
    if (!signal.aborted) {
      if (carry !== '') take(carry);
      if (batch.length) await flush();
    }
    await Promise.all(inFlight);
    if (failure) throw failure;
  } finally {
    raw.destroy();
  }
}

/** Sends a batch; an event the storage refuses is reported, dropped, and the rest sent again. */
async function sendSkipping(items: { event: object; line: number }[], send: Send, file: string, report: Report): Promise<void> {
  let rest = items;
  while (rest.length) {
    try {
      await send(rest.map((i) => i.event));
      report.events += rest.length;
      return;
    } catch (error) {
      if (!(error instanceof InvalidBodyError) || error.index === undefined || !rest[error.index]) throw error;
      skip(report, `${file}:${rest[error.index]!.line}: ${error.message.replace(/^Event \d+: /, '')} Skipped.`);
      rest = rest.filter((_, i) => i !== error.index);
    }
  }
}

function skip(report: Report, message: string): void {
  report.skipped++;
  if (report.shown.length < SHOWN) report.shown.push(message);
}

/** Retries while storage is `overloaded` (it drains as compaction catches up), waiting as told. */
async function retrying(attempt: () => Promise<void>): Promise<void> {
  const started = monotonicMs();
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      const overloaded = error instanceof LogEndpointsError && error.code === 'overloaded';
      if (!overloaded || monotonicMs() - started > MAX_RETRY_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, (error.retryAfterSeconds ?? 1) * 1000));
    }
  }
}

function ingestUrl(base: string, source: string): string {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new UsageError(`--url must be the server's URL, such as http://127.0.0.1:4000, not "${base}".`, 'ingest');
  }
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/api/logs`;
  url.searchParams.set('source_name', source);
  return url.toString();
}

/** One batch as Logflare's body, gzipped; the server's error comes back as the same error class. */
async function postBatch(endpoint: string, key: string, events: object[]): Promise<void> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'X-API-KEY': key, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    body: gzipSync(stringifyExactJson({ batch: events })),
  });
  if (response.ok) {
    await response.arrayBuffer();
    return;
  }
  const text = await response.text();
  let error: { code?: string; message?: string; index?: number } = {};
  try {
    error = (JSON.parse(text) as { error?: typeof error }).error ?? {};
  } catch {
    // Not our JSON error (a proxy's page): the status says enough.
  }
  const message = error.message ?? `The server answered ${response.status}.`;
  if (error.code === 'invalid_body') throw new InvalidBodyError(message, { index: error.index });
  const retryAfter = Number(response.headers.get('retry-after'));
  throw new LogEndpointsError((error.code ?? 'query_failed') as LogEndpointsError['code'], response.status, message, {
    retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : 1,
  });
}
