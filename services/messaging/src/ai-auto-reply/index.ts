/**
 * The guarded AI auto-reply (issue #32 item 5): the consumer of ai's settings announcements (auto-reply-settings/
 * holds the copy and the in-memory account set, so the inbound path pays a Set lookup), the rows the inbound batch
 * queues for the assistant, and the worker that asks ai and sends its answer (source `ai`) or hands the conversation
 * to a person. The rest of messaging uses this face.
 */
export { planAutoReplies, type ReceivedForAssistant } from './plan';
export { AutoReplyWorker } from './worker';
export { applyAutoReplySettings, AUTO_REPLY_SETTINGS_BINDINGS } from './settings-consumer';
