import { foldKey } from '../local/text';

/**
 * A customer asking for a person rather than the assistant (issue #32 item 5): "gặp nhân viên", "cho tôi nói chuyện
 * với người thật", "talk to a human", typed with or without diacritics (compared folded: "gap nhan vien"). Matched as
 * whole phrases, so "nhân viên giao hàng đến chưa" (has the delivery man come) does not count: the word "nhân viên"
 * alone is not a request, asking to meet, talk to or be connected with one is.
 */
const PATTERNS: RegExp[] = [
  // Vietnamese: meet / talk to / connect me with a staff member, a consultant, a real person, the shop owner.
  /\b(gap|goi|noi chuyen (voi|cung)|chat (voi|cung)|lien he|ket noi (voi|cho \w+ voi)?|chuyen (cho \w+ )?(sang|qua|toi)|can|muon gap|cho (em|toi|minh|tui|anh|chi) gap)\s+(mot |1 )?(nhan vien|nguoi that|nguoi (that )?(tu van|ho tro)|tu van vien|admin|chu shop|quan ly|nguoi phu trach|ban nguoi)\b/u,
  /\b(nhan vien|nguoi that) (oi|dau|tra loi|ho tro (em|toi|minh) (voi|di))\b/u,
  /\bkhong (muon )?(noi chuyen|chat) voi (bot|may|robot|ai)\b/u,
  // English: talk / speak / chat to a human, person, agent, representative; a real person; customer service.
  /\b(talk|speak|chat) (to|with) (a |an |the |some |your )?(human|person|people|agent|representative|rep|real person|staff|manager|someone real|operator|live agent)\b/u,
  /\b(human|live|real) (agent|person|being|support)\b/u,
  /\b(connect|transfer|put) me (to|through to|with) (a |an |the )?(human|person|agent|representative|staff|operator|manager)\b/u,
  /\b(i want|i need|can i (get|have)|let me (talk to|speak to)) (a |an )?(human|person|agent|representative|operator)\b/u,
  /\bnot (a |the )?(bot|robot|machine)\b/u,
];

export function asksForPerson(text: string): boolean {
  const folded = foldKey(text)
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\s+/g, ' ');
  return PATTERNS.some((p) => p.test(folded));
}
