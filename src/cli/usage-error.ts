/** A mistake in the command line: printed with a pointer to `--help`, exit code 2, never a stack. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}
