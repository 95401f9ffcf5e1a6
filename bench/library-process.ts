/**
 * The library in a process of its own for the bench's side-by-side rounds, as an application
 * embedding it runs it: its memory is its own, not the bench's.
 *
 * Why: the library gives freed memory back after a query when the process's resident memory is
 * past its ceiling (`MemoryRelief`; DuckDB's limit until round twenty-two). In the bench's process that memory is mostly
 * its peers' (chdb, bare DuckDB) and the dataset's, so the library trimmed after nearly every call
 * and each trim (about 100 ms of CPU) was counted against it (docs/performance.md, "Trims after
 * queries: fewer tried, not taken"). In its own process it pays for what it holds itself, and its
 * peak (VmHWM) can be given beside its times.
 *
 * The calls are timed in the child (the same `timeMs` around `query`), so the messages' round trip
 * is not in the library's figures; the parent still alternates it with the peers round by round.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createEndpoints, type Endpoints, type SourceGlobs } from '../src/index';
import type { BenchCase } from './cases';
import type { AnswerRow } from './peers/peer';
import { REFERENCE } from './dataset';
import { peakRssMb } from './serve-process';
import { timeMs } from './stats';

type Request =
  | { op: 'open'; sources: SourceGlobs }
  | { op: 'query'; endpoint: string; params: Record<string, string>; rows: boolean }
  | { op: 'cold'; sources: SourceGlobs; endpoint: string; params: Record<string, string> }
  | { op: 'close' }
  | { op: 'peak' };
type Reply = { ms?: number; rows?: AnswerRow[]; peakMiB?: number; error?: string };

/**
 * The endpoints every library variant of the bench opens: caching off, 2 threads, and no time
 * limit worth the name (the NDJSON cases run for tens of seconds by design, what the compacted
 * layout saves, and a benchmark measures them rather than cutting them off).
 */
const open = (sources: SourceGlobs) => createEndpoints({ sources, now: () => REFERENCE, cache: false, duckdb: { threads: 2 }, limits: { queryTimeoutMs: 600_000 } });

/** The library's side, in a child process: one set of endpoints open at a time. */
export class LibraryProcess {
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (message: { id: number } & Reply) => {
      const waiter = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (message.error !== undefined) waiter?.reject(new Error(`library process: ${message.error}`));
      else waiter?.resolve(message);
    });
    child.on('exit', (code) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`library process exited (${code})`));
      this.waiting.clear();
    });
  }

  /** Starts the child (this file, run with the bench's own loader flags). */
  static start(): LibraryProcess {
    // Structured clone keeps what JSON would not (bigints, dates) in the answers compared.
    return new LibraryProcess(fork(fileURLToPath(import.meta.url), ['--child'], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  }

  private ask(request: Request): Promise<Reply> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.send({ id, ...request });
    });
  }

  /** Opens the endpoints over `sources` (closing any open before). */
  async open(sources: SourceGlobs): Promise<void> {
    await this.ask({ op: 'open', sources });
  }

  /** One call of the case on the open endpoints: its time in the child, and its rows when asked. */
  async query(c: BenchCase, rows = false): Promise<{ ms: number; rows: AnswerRow[] }> {
    const reply = await this.ask({ op: 'query', endpoint: c.endpoint as string, params: c.params, rows });
    return { ms: reply.ms!, rows: reply.rows ?? [] };
  }

  /** A cold call: new endpoints, one query timed, closed. */
  async cold(sources: SourceGlobs, c: BenchCase): Promise<number> {
    return (await this.ask({ op: 'cold', sources, endpoint: c.endpoint as string, params: c.params })).ms!;
  }

  async close(): Promise<void> {
    await this.ask({ op: 'close' });
  }

  /** The child's peak resident memory so far (VmHWM, MiB). */
  async peakMiB(): Promise<number> {
    return (await this.ask({ op: 'peak' })).peakMiB!;
  }

  /** Ends the child. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.disconnect();
    await exited;
  }
}

async function serve(): Promise<void> {
  let ep: Endpoints | null = null;
  const handle = async (request: Request): Promise<Reply> => {
    switch (request.op) {
      case 'open':
        await ep?.close();
        ep = await open(request.sources);
        return {};
      case 'query': {
        if (!ep) throw new Error('no endpoints open');
        const endpoints = ep;
        let rows: AnswerRow[] = [];
        const ms = await timeMs(async () => {
          rows = (await endpoints.query(request.endpoint, request.params)).result as AnswerRow[];
        });
        return request.rows ? { ms, rows } : { ms };
      }
      case 'cold': {
        const fresh = await open(request.sources);
        try {
          return { ms: await timeMs(() => fresh.query(request.endpoint, request.params)) };
        } finally {
          await fresh.close();
        }
      }
      case 'close':
        await ep?.close();
        ep = null;
        return {};
      case 'peak':
        return { peakMiB: peakRssMb(process.pid) };
    }
  };
  // One request at a time, in order: the parent waits for each reply before its next timing.
  let queue = Promise.resolve();
  process.on('message', (message: { id: number } & Request) => {
    queue = queue.then(async () => {
      try {
        process.send!({ id: message.id, ...(await handle(message)) });
      } catch (error) {
        process.send!({ id: message.id, error: String((error as Error)?.stack ?? error) });
      }
    });
  });
  process.on('disconnect', () => void queue.then(() => ep?.close()).then(() => process.exit(0)));
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--child')) await serve();
