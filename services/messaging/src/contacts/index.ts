/**
 * Messaging's side of crm's contacts: the contact a sender or thread stands for (resolved and upserted through crm),
 * crm's contact links and merges applied to conversations and messages. The rest of messaging uses this face.
 */
export {
  type ContactTarget,
  contactTarget,
  groupFallbackName,
  type LinkedContact,
  networkAvatar,
  senderTarget,
  threadTarget,
  tryResolveSender,
  tryUpsertContact,
  tryUpsertContacts,
} from './contacts';
export { applyContactLink, type ContactLinks, prepareContactLinks } from './contact-links';
export { applyContactMerged, applyContactMergeUndone, mergeEventKey } from './contact-merges';
export { openConversation, openConversations } from './open-conversation';
