import { invalid } from '@crm/grpc-kit';

export const FOLDER_NAME_MAX = 100;
export const DEFAULT_FOLDER_COLOR = '#6B7280';

/** #rgb or #rrggbb. */
export const FOLDER_COLOR_PATTERN = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
export const FOLDER_COLOR_MESSAGE = 'must be a hex color such as #3B82F6';

/** A folder's color as stored: trimmed, upper-cased. */
export function folderColor(value: string | undefined, field = 'color'): string {
  const v = (value ?? '').trim();
  if (!FOLDER_COLOR_PATTERN.test(v)) throw invalid(field, FOLDER_COLOR_MESSAGE);
  return v.toUpperCase();
}

/** Most conversations filed in a folder by one request. */
export const FOLDER_CONVERSATIONS_MAX = 500;
export const FOLDER_CONVERSATIONS_EMPTY = 'must list at least one conversation';
export const FOLDER_CONVERSATIONS_TOO_MANY = `must list at most ${FOLDER_CONVERSATIONS_MAX} conversations`;
