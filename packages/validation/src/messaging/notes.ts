/** Most characters of a private note on a conversation (once trimmed). */
export const CONVERSATION_NOTE_MAX = 5000;
