import type { HandlersFor } from '@crm/grpc-kit';
import type { Deps } from '../deps';
import { bulkUpdate } from '../bulk';
import { assignmentSettings, ownership, assignRoundRobin } from '../assignment';
import { attachments } from '../attachments';
import { conversations, publicApi } from '../inbox';
import { folders } from '../folders';
import { notes } from '../notes';
import { searchMessages } from '../search';
import { presets } from '../presets';
import { send } from '../send';
import { startConversation } from '../outreach';
import { status } from '../status';
import { visibility } from '../visibility';
import * as reactions from '../reactions';
import * as scheduled from '../scheduled';
import { setPriority } from '../priority';
import * as macros from '../macros';
import { getInboxSettings, updateInboxSettings } from '../inbox-settings';
import { csatAnalytics } from '../csat';

/** messaging.v1.MessagingService: decode, call the domain, return; errors are mapped by grpc-kit. */
export function messagingHandlers(deps: Deps): HandlersFor<'messaging.v1.MessagingService'> {
  return {
    GetCounts: (_req, ctx) => conversations.counts(deps, ctx),
    ListConversations: (req, ctx) => conversations.list(deps, ctx, req),
    GetConversation: (req, ctx) => conversations.detail(deps, ctx, req),
    ArchiveConversation: (req, ctx) => conversations.move(deps, ctx, req.id, 'archive'),
    CloseConversation: (req, ctx) => conversations.move(deps, ctx, req.id, 'close'),
    ReopenConversation: (req, ctx) => conversations.move(deps, ctx, req.id, 'reopen'),
    MarkConversationRead: (req, ctx) => conversations.markRead(deps, ctx, req.id),
    MarkConversationUnread: (req, ctx) => conversations.markUnread(deps, ctx, req.id),
    UpdateMessageFlags: (req, ctx) => conversations.updateFlags(deps, ctx, req),
    AssignConversation: (req, ctx) => ownership.assign(deps, ctx, req),
    SetConversationStatus: (req, ctx) => status.setStatus(deps, ctx, req),
    SetConversationPriority: (req, ctx) => setPriority(deps, ctx, req),
    BulkUpdateConversations: (req, ctx) => bulkUpdate(deps, ctx, req),
    GetAccountAssignment: (req, ctx) => assignmentSettings.get(deps, ctx, req),
    SetAccountAssignment: (req, ctx) => assignmentSettings.set(deps, ctx, req),
    AssignRoundRobin: (req, ctx) => assignRoundRobin(deps, ctx, req),

    ListMacros: (req, ctx) => macros.listMacros(deps, ctx, req),
    CreateMacro: (req, ctx) => macros.createMacro(deps, ctx, req),
    UpdateMacro: (req, ctx) => macros.updateMacro(deps, ctx, req),
    DeleteMacro: (req, ctx) => macros.deleteMacro(deps, ctx, req.id),
    RunMacro: (req, ctx) => macros.runMacro(deps, ctx, req),

    CreateNote: (req, ctx) => notes.create(deps, ctx, req),
    ListNotes: (req, ctx) => notes.list(deps, ctx, req),
    DeleteNote: (req, ctx) => notes.remove(deps, ctx, req),
    SearchMessages: (req, ctx) => searchMessages(deps, ctx, req),
    GetInboxSettings: (_req, ctx) => getInboxSettings(deps, ctx),
    UpdateInboxSettings: (req, ctx) => updateInboxSettings(deps, ctx, req),
    GetCsatAnalytics: (req, ctx) => csatAnalytics(deps, ctx, req),
    GetInboxAudience: (_req, ctx) => visibility.audience(deps, ctx),

    SendMessage: (req, ctx) => send.sendToConversation(deps, ctx, req),
    SendToThread: (req, ctx) => send.sendToThread(deps, ctx, req),
    StartConversation: (req, ctx) => startConversation(deps, ctx, req),

    ScheduleMessage: (req, ctx) => scheduled.scheduleMessage(deps, ctx, req),
    ListScheduledMessages: (req, ctx) => scheduled.listScheduledMessages(deps, ctx, req),
    GetScheduledMessage: (req, ctx) => scheduled.getScheduledMessage(deps, ctx, req.id),
    UpdateScheduledMessage: (req, ctx) => scheduled.updateScheduledMessage(deps, ctx, req),
    CancelScheduledMessage: (req, ctx) => scheduled.cancelScheduledMessage(deps, ctx, req.id),

    ListFolders: (_req, ctx) => folders.list(deps, ctx),
    CreateFolder: (req, ctx) => folders.create(deps, ctx, req),
    UpdateFolder: (req, ctx) => folders.update(deps, ctx, req),
    DeleteFolder: (req, ctx) => folders.remove(deps, ctx, req.id),
    AddConversationsToFolder: (req, ctx) => folders.addConversations(deps, ctx, req),
    RemoveConversationFromFolder: (req, ctx) => folders.removeConversation(deps, ctx, req),

    ListPresets: (req, ctx) => presets.list(deps, ctx, req),
    GetPreset: (req, ctx) => presets.get(deps, ctx, req.id),
    CreatePreset: (req, ctx) => presets.create(deps, ctx, req),
    UpdatePreset: (req, ctx) => presets.update(deps, ctx, req),
    DeletePreset: (req, ctx) => presets.remove(deps, ctx, req.id),
    DeleteAttachment: (req, ctx) => attachments.deleteUpload(deps, ctx, req.id),

    ListPublicConversations: (req, ctx) => publicApi.conversations(deps, ctx, req),
    ListPublicMessages: (req, ctx) => publicApi.conversationMessages(deps, ctx, req),
    GetPublicMessage: (req, ctx) => publicApi.message(deps, ctx, req.id),

    RecallMessage: (req, ctx) => reactions.recallMessage(deps, ctx, req.id),
    ReactToMessage: (req, ctx) => reactions.reactToMessage(deps, ctx, req),
    RemoveReaction: (req, ctx) => reactions.removeReaction(deps, ctx, req.id),

    ContactConversations: (req, ctx) => conversations.contactConversations(deps, ctx, req.contactId),
    RenewGrant: async (req, ctx) => {
      await deps.grants.renew(ctx, req.grant);
      return { ok: true };
    },
    LatestConversationForContact: (req, ctx) => conversations.latestForContact(deps, ctx, req.contactId),
    LatestConversationsForContacts: (req, ctx) => conversations.latestForContacts(deps, ctx, req.contactIds ?? []),
  };
}
