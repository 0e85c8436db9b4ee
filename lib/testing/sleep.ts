/** Resolves after `ms` milliseconds (the cases' pauses). @internal */
export const sleep = (ms: number): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, ms));
