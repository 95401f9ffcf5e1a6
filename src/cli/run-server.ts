import type { Endpoints } from '../create-endpoints';
import { LogEndpointsError } from '../errors';
import type { ErrorContext, HandlerOptions } from '../http/handler-options';
import type { CliIO } from './io';
import { startServer, type RunningServer } from './start-server';

/**
 * Serves until SIGINT/SIGTERM, then stops gracefully. `ready` prints whatever the command
 * prints once the server listens. A second signal cuts the remaining connections.
 */
export async function runServer(
  ep: Endpoints,
  options: HandlerOptions & { host: string; port: number },
  io: CliIO,
  ready: (server: RunningServer) => void,
): Promise<number> {
  let running: RunningServer;
  try {
    running = await startServer(ep, { onError: logTo(io), ...options });
  } catch (error) {
    await ep.close();
    throw error;
  }
  ready(running);
  const signal = await io.shutdownSignal();
  io.stderr.write(`${signal}: stopping (answering requests in flight)…\n`);
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
    io.stderr.write(`${new Date().toISOString()} ${context.status} ${context.method} ${context.path} request=${context.requestId}: ${message}${cause}\n`);
  };
}
