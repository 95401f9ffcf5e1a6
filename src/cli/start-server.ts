import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Endpoints } from '../create-endpoints';
import { createHandler } from '../http/create-handler';
import type { HandlerOptions } from '../http/handler-options';
import { toNodeListener } from '../node/to-node-listener';

export interface RunningServer {
  server: Server;
  /** `http://host:port` as bound (the real port when 0 was asked for). */
  url: string;
  /**
   * Graceful stop: no new connections, idle keep-alive connections closed, requests in flight
   * answered, then the endpoints closed. Past `forceAfterMs` the remaining connections are cut.
   */
  stop: (forceAfterMs?: number) => Promise<void>;
  /** Cuts every connection now (a second Ctrl+C). */
  force: () => void;
}

/** Serves `ep` over node:http on host:port; rejects with a clear message when the port is taken. */
export async function startServer(ep: Endpoints, options: HandlerOptions & { host: string; port: number }): Promise<RunningServer> {
  const { host, port, ...handlerOptions } = options;
  const listener = toNodeListener(createHandler(ep, handlerOptions));
  let stopping = false;
  const server = createServer((req, res) => {
    // While stopping, keep-alive connections close after their current answer.
    if (stopping) res.setHeader('Connection', 'close');
    res.on('finish', () => {
      if (stopping) server.closeIdleConnections();
    });
    listener(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE' ? new Error(`Port ${port} on ${host} is already in use; choose another with --port.`) : error);
    });
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let stopped: Promise<void> | null = null;
  return {
    server,
    url: `http://${shownHost}:${address.port}`,
    stop(forceAfterMs = 10_000) {
      stopped ??= (async () => {
        stopping = true;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const force = setTimeout(() => server.closeAllConnections(), forceAfterMs);
        force.unref();
        await closed;
        clearTimeout(force);
        await ep.close();
      })();
      return stopped;
    },
    force: () => server.closeAllConnections(),
  };
}
