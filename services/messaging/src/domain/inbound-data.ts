// Its own file because inbound.ts, contacts.ts and self-messages.ts all read it, and inbound.ts imports the other two.

/** `chatnet.inbound` data as the connector publishes it: a raw message from the network. */
export interface InboundData {
  accountId: string;
  chatnetMessageId: string;
  threadId: string;
  threadType: 'user' | 'group';
  fromUid: string;
  fromName: string;
  fromAvatar: string;
  content: string;
  contentType: string;
  sentAt: Date;
  /** Group threads: the group's name from the network; '' when it did not say (and always for user threads). */
  groupName: string;
  /** Ids of the files the message carries, already stored here by the connector (uploads not yet linked). */
  attachmentIds: string[];
  /** The sender's own id of the message ('' when the network gave none), kept to mark it read on the network. */
  cliMsgId: string;
  /** The account itself wrote it (typed on the phone): stored as outbound (self-messages.ts), never as received. */
  fromSelf: boolean;
  /** The network id of the message of the thread it quotes ('' for none). */
  quoteChatnetMessageId: string;
}
