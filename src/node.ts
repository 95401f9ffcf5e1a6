// log-endpoints/node: the HTTP API as a node:http request listener (and Express / Connect middleware).
import type { Endpoints } from './api/create-endpoints';
import { createHandler } from './http/create-handler';
import type { HandlerOptions } from './http/handler-options';
import { toNodeListener, type NodeListener } from './node/to-node-listener';

export { toNodeListener };
/** `maxHeaderSize` for your node:http server: URLs up to the handler's 64 KiB limit (Node's default is 16 KiB). */
export { MAX_HEADER_BYTES } from './http/handler-options';
export type { NodeListener };

/**
 * `createHandler` and `toNodeListener` in one call.
 *
 * @example
 * http.createServer(createNodeListener(ep, { apiKeys: ['secret'] })).listen(4000, '127.0.0.1');
 */
export function createNodeListener(ep: Endpoints, options: HandlerOptions): NodeListener {
  return toNodeListener(createHandler(ep, options));
}
