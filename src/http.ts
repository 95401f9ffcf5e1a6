// log-endpoints/http: the HTTP API as one fetch-style handler.
export { createHandler } from './http/create-handler';
export type { FetchHandler } from './http/create-handler';
export type { CorsOptions, ErrorContext, HandlerOptions } from './http/handler-options';
export type { OutputFormat } from './http/negotiate-format';
export type { DashboardOptions } from './http/serve-dashboard';
