/**
 * A byte count as people write it, for messages that name a size setting (an upload limit, a quota): whole MB or KB
 * when it is one (the defaults are), bytes otherwise, so a limit is never rounded into another number.
 */
export function sizeText(bytes: number): string {
  const MB = 1024 * 1024;
  if (bytes % MB === 0) return `${bytes / MB} MB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}
