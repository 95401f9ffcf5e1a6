import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CliIO } from '../../src/cli/io';
import { HANG_MS } from './hang-guard';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every child started by a test file: none outlives its test worker, even after a timeout. */
const started = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/**
 * `log-endpoints <args>` as a real process (the TypeScript source through tsx, no build needed).
 * `preload` modules are imported first (`--import`), e.g. a test hook; `wrapper` runs it inside
 * another command (`['unshare', '--pid', '--fork', '--mount-proc']`).
 */
export function spawnCli(args: string[], env: Record<string, string> = {}, preload: string[] = [], wrapper: string[] = []): ChildProcess & { output: { stdout: string; stderr: string } } {
  const node = [process.execPath, '--import', 'tsx', ...preload.flatMap((p) => ['--import', p]), 'src/cli.ts', ...args];
  const [command, ...rest] = [...wrapper, ...node];
  const child = spawn(command!, rest, {
    cwd: ROOT,
    env: { ...process.env, LOG_ENDPOINTS_API_KEYS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  child.once('exit', () => started.delete(child));
  const output = { stdout: '', stderr: '' };
  child.stdout!.setEncoding('latin1').on('data', (c: string) => (output.stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (output.stderr += c));
  return Object.assign(child, { output });
}

/** Runs the command to its end: exit code and output. Killed (and failing) past `HANG_MS`. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnCli(args, env);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`log-endpoints ${args.join(' ')} did not finish; stderr: ${child.output.stderr}`));
    }, HANG_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, ...child.output });
    });
  });
}

/** Resolves with the first match of `pattern` in the child's stdout; rejects if it exits first or past `HANG_MS`. */
export function waitForStdout(child: ReturnType<typeof spawnCli>, pattern: RegExp): Promise<RegExpMatchArray> {
  return waitForOutput(child, 'stdout', pattern);
}

/** The same for stderr. */
export function waitForStderr(child: ReturnType<typeof spawnCli>, pattern: RegExp): Promise<RegExpMatchArray> {
  return waitForOutput(child, 'stderr', pattern);
}

function waitForOutput(child: ReturnType<typeof spawnCli>, stream: 'stdout' | 'stderr', pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const m = pattern.exec(child.output[stream]);
      if (m) {
        cleanup();
        resolve(m);
      }
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`exited with ${code} before printing ${pattern} on ${stream}; stderr: ${child.output.stderr}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no ${pattern} on ${stream}; stderr: ${child.output.stderr}`));
    }, HANG_MS);
    const cleanup = () => {
      clearTimeout(timer);
      child[stream]!.off('data', check);
      child.off('exit', onExit);
    };
    // Registered after spawnCli's own listener, so output already holds the new chunk.
    child[stream]!.on('data', check);
    child.on('exit', onExit);
    check();
  });
}

/** An in-process `CliIO` that records output; `signal()` plays a SIGINT/SIGTERM. */
export function memoryIO(env: Record<string, string> = {}) {
  const out = { stdout: '', stderr: '' };
  const waiting: Array<(signal: string) => void> = [];
  let signalWaiters = 0;
  const io: CliIO = {
    stdout: { write: (c: string | Uint8Array) => ((out.stdout += typeof c === 'string' ? c : Buffer.from(c).toString('latin1')), true) },
    stderr: { write: (c: string | Uint8Array) => ((out.stderr += String(c)), true) },
    env,
    shutdownSignal: () => {
      signalWaiters++;
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
  return {
    io,
    out,
    /** Delivers a signal to whoever waits for one. */
    signal: (name = 'SIGTERM') => waiting.splice(0).forEach((resolve) => resolve(name)),
    get signalWaiters() {
      return signalWaiters;
    },
  };
}
