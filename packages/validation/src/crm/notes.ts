/** Most characters of a note on a contact. */
export const NOTE_MAX = 10_000;
