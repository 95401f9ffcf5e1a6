import { LogEndpointsError } from '../errors';
import { checkCommand } from './check-command';
import { clickhouseCommand } from './clickhouse-command';
import { compactCommand } from './compact-command';
import { demoCommand } from './demo-command';
import { demoDataCommand } from './demo-data-command';
import { ingestCommand } from './ingest-command';
import { helpText } from './help';
import type { CliIO } from './io';
import { queryCommand } from './query-command';
import { serveCommand } from './serve-command';
import { UsageError } from './usage-error';

const COMMANDS: Record<string, (argv: string[], io: CliIO) => Promise<number>> = {
  serve: serveCommand,
  query: queryCommand,
  'demo-data': demoDataCommand,
  demo: demoCommand,
  compact: compactCommand,
  clickhouse: clickhouseCommand,
  ingest: ingestCommand,
  check: checkCommand,
};

/**
 * The `log-endpoints` command line. Returns the exit code: 0 done, 1 failed (engine, files,
 * port), 2 wrong usage or a parameter the endpoint refuses. Errors are one clear line on
 * stderr; the stack only with LOG_ENDPOINTS_DEBUG=1.
 */
export async function main(argv: string[], io: CliIO, version: string): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined) {
      io.stderr.write(helpText('main')!);
      return 2;
    }
    if (command === '--help' || command === '-h' || command === 'help') {
      io.stdout.write((rest[0] && helpText(rest[0])) || helpText('main')!);
      return 0;
    }
    if (command === '--version' || command === '-v') {
      io.stdout.write(`${version}\n`);
      return 0;
    }
    const run = COMMANDS[command];
    if (!run) throw new UsageError(`Unknown command "${command}". Commands: ${Object.keys(COMMANDS).join(', ')}.`);
    return await run(rest, io);
  } catch (error) {
    return report(error, io);
  }
}

function report(error: unknown, io: CliIO): number {
  const debug = io.env.LOG_ENDPOINTS_DEBUG === '1';
  if (debug) io.stderr.write(`${debugText(error)}\n`);
  if (error instanceof UsageError) {
    const help = error.command ? `log-endpoints ${error.command} --help` : 'log-endpoints --help';
    io.stderr.write(`error: ${oneLine(error.message)}\nSee: ${help}\n`);
    return 2;
  }
  if (error instanceof LogEndpointsError) {
    // The message is safe and short; the cause (SQL, file paths) only with LOG_ENDPOINTS_DEBUG=1.
    io.stderr.write(`error [${error.code}]: ${oneLine(error.message)}${debug ? '' : hint(error)}\n`);
    return error.status < 500 || error.code === 'invalid_option' ? 2 : 1;
  }
  io.stderr.write(`error: ${oneLine(error instanceof Error ? error.message : String(error))}\n`);
  return 1;
}

/** A pointer to the details for errors whose cause holds them. */
function hint(error: LogEndpointsError): string {
  return error.status >= 500 && error.cause !== undefined ? ' (details: LOG_ENDPOINTS_DEBUG=1)' : '';
}

/** The stack, and the cause's stack or message: everything, for a developer. */
function debugText(error: unknown): string {
  const text = (error as Error)?.stack ?? String(error);
  const cause = (error as Error)?.cause;
  if (cause === undefined) return text;
  return `${text}\nCaused by: ${(cause as Error)?.stack ?? String(cause)}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
