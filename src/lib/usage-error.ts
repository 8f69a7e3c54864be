/** A mistake in how the CLI or the server was configured: printed plainly, exit status 2. */
export class UsageError extends Error {}
