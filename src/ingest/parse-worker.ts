import { extname } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { EngineError, InvalidBodyError, PayloadTooLargeError } from '../errors';
import { bodyLines, type BodyLines } from './body-lines';
import type { BatchLimits } from './serialize-events';
import type { EventSpan } from '../time/event-span';
import { InternalError } from '../util/internal-error';

/** Bodies at least this large are parsed off the main thread (a smaller one takes a few ms at most). */
export const OFF_THREAD_BYTES = 64 * 1024;

/**
 * The parser thread's heap. Parsing a body costs many times its bytes (an 11 MB event of 650,000
 * keys takes about 110 MB of objects, and the heap grows by as much again before a collection
 * gives it back): without a bound, the thread's heap grew with each large body parsed in a row.
 * Bounded, V8 collects sooner; a body whose parse does not fit kills the thread (its request,
 * and those queued behind it, answer 503 with Retry-After) and the next body starts a new one.
 * Its young generation is 8 MB: each body's objects die young, and at 32 MB the thread held
 * about 20 MiB more at 1,000 events/s for no CPU it saved (docs/performance.md, "Footprint").
 */
export const PARSER_HEAP = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 8 };

/**
 * How long the parser thread stays after its last job before it exits (the next large body starts
 * a new one: its first answer came 34-38 ms after, for 36-42 ms of CPU, measured). Why: the
 * thread's heap and its share of the allocator stay with the process while it lives, so once a
 * sender stops the process would keep them; a sender that keeps sending (Vector flushes every
 * second) keeps its thread. See `parserIdleMs` for tests.
 */
export const PARSER_IDLE_MS = 30_000;

let idleMs = PARSER_IDLE_MS;

/**
 * Sets how long the parser thread stays after its last job (`PARSER_IDLE_MS` by default); for
 * tests, which cannot wait for the default. Applies from the thread's next job on.
 *
 * @example
 * parserIdleMs(0); // the thread exits once it has no job
 */
export function parserIdleMs(ms: number): void {
  idleMs = ms;
}

/** Whether the parser thread is running (tests). */
export function parserRunning(): boolean {
  return shared !== null;
}

/** `workerData` of the parser thread: this module, loaded again, serves parse jobs. */
const ROLE = 'log-endpoints-ingest-parser';

interface Job {
  id: number;
  body: Uint8Array;
  contentType: string | null;
  arrival: string;
  limits: BatchLimits;
  source?: string;
  nestingChecked: boolean;
}

type Answer =
  | { id: number; lines: Uint8Array; events: number; key: string | null; span?: EventSpan; arraysFree?: boolean }
  | { id: number; error: { kind: 'invalid_body' | 'payload_too_large' | 'other'; message: string; index?: number; limit?: number } };

/**
 * `bodyLines` on a thread of its own, so a large body (JSON.parse of a 12 MiB event with many
 * keys takes about a second) never holds up the requests around it: the body goes over by
 * transfer and its lines come back the same way, so the main thread copies and parses nothing.
 * One thread, started at the first large body and shared by every instance of the process; it
 * does not keep the process alive.
 *
 * @example
 * const { lines, events } = await bodyLinesOffThread(body, 'application/json', arrival, BATCH_LIMITS);
 */
export function bodyLinesOffThread(body: Uint8Array, contentType: string | null, arrival: string, limits: BatchLimits, source?: string, nestingChecked = false): Promise<BodyLines> {
  return parser().run({ body, contentType, arrival, limits, nestingChecked, ...(source === undefined ? {} : { source }) });
}

let shared: Parser | null = null;

function parser(): Parser {
  shared ??= new Parser((stopped) => {
    // A thread that stops is no longer the shared one (a new one may be already).
    if (shared === stopped) shared = null;
  });
  return shared;
}

class Parser {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve: (lines: BodyLines) => void; reject: (error: unknown) => void }>();
  private next = 0;
  private idle: NodeJS.Timeout | null = null;

  constructor(private readonly onExit: (stopped: Parser) => void) {
    const here = new URL(import.meta.url);
    // From the sources (tests, tsx) the thread runs this very module, through tsx as its parent
    // does. Built, it runs the bundle's `ingest-parser` entry (tsup.config.ts), beside every chunk:
    // `import.meta.url` names some chunk of dist/ (in the CommonJS build a shim's), never this code.
    this.worker = here.pathname.endsWith('.ts')
      ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(here.href)}); })`, { eval: true, workerData: { role: ROLE }, resourceLimits: PARSER_HEAP })
      : new Worker(new URL(`./ingest-parser${extname(here.pathname)}`, here), { workerData: { role: ROLE }, resourceLimits: PARSER_HEAP });
    this.worker.unref();
    this.worker.on('message', (answer: Answer) => {
      const waiting = this.waiting.get(answer.id);
      if (!waiting) return;
      this.waiting.delete(answer.id);
      if ('error' in answer) waiting.reject(errorOf(answer.error));
      else
        waiting.resolve({
          lines: Buffer.from(answer.lines.buffer, answer.lines.byteOffset, answer.lines.length),
          events: answer.events,
          key: answer.key,
          ...(answer.span ? { span: answer.span } : {}),
          ...(answer.arraysFree ? { arraysFree: true } : {}),
        });
      if (this.waiting.size === 0) {
        this.worker.unref();
        if (this.idle) clearTimeout(this.idle);
        this.idle = setTimeout(() => this.retire(), idleMs);
        this.idle.unref();
      }
    });
    const fail = (cause: unknown) => {
      onExit(this);
      for (const waiting of this.waiting.values()) {
        waiting.reject(new EngineError('overloaded', 'The body could not be parsed now (the parser thread stopped); retry shortly.', { cause, retryAfterSeconds: 1 }));
      }
      this.waiting.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new InternalError('parser_exited', `The parser thread exited with code ${code}.`)));
  }

  /**
   * An idle thread's exit: it stops being the shared one first, so a body that arrives meanwhile
   * starts a new thread instead of going to this one as it exits.
   */
  private retire(): void {
    this.onExit(this);
    void this.worker.terminate();
  }

  run(job: Omit<Job, 'id'>): Promise<BodyLines> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    const id = ++this.next;
    return new Promise<BodyLines>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      // Held while a job runs: a process waiting for its answer does not exit under it.
      this.worker.ref();
      // A copy when the body shares its memory (a Buffer from the pool): only whole buffers move.
      const body = job.body.byteOffset === 0 && job.body.byteLength === job.body.buffer.byteLength ? job.body : new Uint8Array(job.body);
      this.worker.postMessage({ ...job, id, body } satisfies Job, [body.buffer as ArrayBuffer]);
    });
  }
}

function errorOf(error: Extract<Answer, { error: unknown }>['error']): Error {
  if (error.kind === 'invalid_body') return new InvalidBodyError(error.message, error.index === undefined ? undefined : { index: error.index });
  if (error.kind === 'payload_too_large') return new PayloadTooLargeError(error.limit ?? 0, error.message);
  return new EngineError('storage_failed', error.message);
}

/** The thread's side: each job answered with its lines (moved, not copied) or what was wrong. */
function serve(): void {
  parentPort!.on('message', (job: Job) => {
    let answer: Answer;
    let transfer: ArrayBuffer[] = [];
    try {
      const { lines, events, key, span, arraysFree } = bodyLines(job.body, job.contentType, job.arrival, job.limits, job.source, job.nestingChecked);
      const owned = lines.byteOffset === 0 && lines.byteLength === lines.buffer.byteLength ? lines : new Uint8Array(lines);
      answer = { id: job.id, lines: owned, events, key: key ?? null, ...(span ? { span } : {}), arraysFree };
      transfer = [owned.buffer as ArrayBuffer];
    } catch (error) {
      if (error instanceof InvalidBodyError) answer = { id: job.id, error: { kind: 'invalid_body', message: error.message, index: error.index } };
      else if (error instanceof PayloadTooLargeError) answer = { id: job.id, error: { kind: 'payload_too_large', message: error.message, limit: error.limit } };
      else answer = { id: job.id, error: { kind: 'other', message: String((error as Error)?.message ?? error) } };
    }
    parentPort!.postMessage(answer, transfer);
  });
}

if (!isMainThread && (workerData as { role?: unknown } | null)?.role === ROLE) serve();
