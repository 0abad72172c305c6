import { CONTENT_MAX } from './messages';

/** Most characters of a saved reply's fields; its content is a message body. */
export const PRESET_TEXT_MAX = { name: 200, content: CONTENT_MAX, category: 100 } as const;
