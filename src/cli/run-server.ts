import type { Endpoints } from '../api/create-endpoints';
import { LogEndpointsError } from '../errors';
import type { ErrorContext } from '../http/handler-options';
import type { CliIO } from './io';
import { DEFAULT_SHUTDOWN_GRACE_MS, startServer, type RunningServer, type ServerOptions } from './start-server';
import { systemNow } from '../time/clock';

/**
 * Serves until SIGINT/SIGTERM, then stops gracefully: requests in flight get up to
 * `shutdownGraceMs` (default 30 s) to finish, later ones are answered `503 closed`. `ready`
 * prints whatever the command prints once the server listens. A second signal cuts the
 * remaining connections.
 */
export async function runServer(ep: Endpoints, options: ServerOptions, io: CliIO, ready: (server: RunningServer) => void): Promise<number> {
  let running: RunningServer;
  try {
    running = await startServer(ep, { onError: logTo(io), ...options });
  } catch (error) {
    await ep.close();
    throw error;
  }
  ready(running);
  const signal = await io.shutdownSignal();
  const grace = (options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS) / 1000;
  io.stderr.write(`${signal}: stopping (answering requests in flight, for up to ${grace} s)…\n`);
  void io.shutdownSignal().then(() => running.force());
  await running.stop();
  io.stderr.write('Stopped.\n');
  return 0;
}

/** Server-side errors (5xx) with their details, one line each, on stderr. */
function logTo(io: CliIO) {
  return (error: unknown, context: ErrorContext) => {
    const cause = error instanceof LogEndpointsError && error.cause instanceof Error ? `; cause: ${error.cause.message}` : '';
    const message = error instanceof Error ? error.message : String(error);
    const line = `${message}${cause}`.replace(/\s*\n\s*/g, ' ');
    io.stderr.write(`${systemNow().toISOString()} ${context.status} ${context.method} ${context.path} request=${context.requestId}: ${line}\n`);
  };
}
