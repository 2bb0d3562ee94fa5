/** Builds the partner portal into `outdir` (default dist/portal) and answers its asset file names. */
export function buildPortal(outdir?: string): Promise<{ script: string; style: string }>;
