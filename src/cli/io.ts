/** Where a command writes and what it reads from its surroundings; injectable for tests. */
export interface CliIO {
  stdout: NodeJS.WriteStream | { write(chunk: string | Uint8Array): boolean; isTTY?: boolean };
  stderr: NodeJS.WriteStream | { write(chunk: string | Uint8Array): boolean; isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
  /** Resolves on the first SIGINT or SIGTERM (the serve commands stop gracefully then). */
  shutdownSignal: () => Promise<string>;
}
