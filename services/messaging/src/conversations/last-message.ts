/**
 * The SET assignments that make a stored message its conversation's last one (id, preview, time), unless it is older
 * than the one there: a late message (a straggler of a batch, a redelivery, a copy the network echoed) must not
 * replace a newer preview, and last_message_at only moves forward. Every statement that stores a message takes this
 * one fragment (inbound, by thread, in batches; outbound), so the rule cannot drift between them. The arguments are
 * SQL: the new message's columns or parameters. Like every SET of one UPDATE, each assignment reads the row as it was.
 */
export function lastMessageSet(m: { id: string; sentAt: string; content: string; contentType: string; senderName: string }): string {
  const newer = `last_message_at IS NULL OR ${m.sentAt} >= last_message_at`;
  return [
    `last_message_id = CASE WHEN ${newer} THEN ${m.id} ELSE last_message_id END`,
    `last_message_content = CASE WHEN ${newer} THEN ${m.content} ELSE last_message_content END`,
    `last_message_content_type = CASE WHEN ${newer} THEN ${m.contentType} ELSE last_message_content_type END`,
    `last_message_sender_name = CASE WHEN ${newer} THEN ${m.senderName} ELSE last_message_sender_name END`,
    `last_message_at = greatest(last_message_at, ${m.sentAt})`,
  ].join(', ');
}
