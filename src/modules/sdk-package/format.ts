/** A file size as the CLI and the dashboard show it: `86.5 KB`. */
export const kilobytes = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
