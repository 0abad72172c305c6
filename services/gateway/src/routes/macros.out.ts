import type { z } from 'zod';
import type { messaging } from '@crm/proto-types';
import type { messagingRules } from '@crm/validation';
import type { Macro as MacroSchema, MacroRun as MacroRunSchema, StoredMacroAction } from './macros.schemas';

type Macro = messaging.Macro__Output;
type MacroAction = messaging.MacroAction__Output;
type MacroRun = messaging.MacroRun__Output;

/** One action as it was written: only its own fields; "" (nobody, no team, no priority) back to null. */
export function macroActionOut(a: MacroAction): z.input<typeof StoredMacroAction> {
  switch (a.type) {
    case 'send_message':
      return { type: a.type, content: a.content ?? '', contentType: a.contentType ?? 'text' };
    case 'add_note':
      return { type: a.type, content: a.content ?? '' };
    case 'assign':
      return { type: a.type, assigneeId: a.assigneeId || null, ...(a.teamId === undefined ? {} : { teamId: a.teamId || null }) };
    case 'set_status':
      return { type: a.type, status: a.status ?? '' };
    case 'set_priority':
      return { type: a.type, priority: (a.priority || null) as messagingRules.ConversationPriority | null };
    case 'add_to_folder':
      return { type: a.type, folderId: a.folderId ?? '' };
    default:
      // The one type left (messaging stores no other); the response contract would refuse anything else.
      return { type: a.type as 'snooze', ...(a.minutes !== undefined ? { minutes: a.minutes } : { snoozedUntil: a.snoozedUntil ?? '' }) };
  }
}

/** A macro: ownerId null when an API key made it (a shared one). */
export function macroOut(m: Macro): z.input<typeof MacroSchema> {
  return {
    id: m.id,
    name: m.name,
    shared: m.shared,
    ownerId: m.ownerId ?? null,
    actions: m.actions.map(macroActionOut),
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
  };
}

/** A run's outcome, one result per action in order; `error` null when it succeeded. */
export function macroRunOut(r: MacroRun): z.input<typeof MacroRunSchema> {
  return {
    results: r.results.map((x) => ({
      type: x.type as messagingRules.MacroActionType,
      ok: x.ok,
      error: x.error ? { code: x.error.code, message: x.error.message } : null,
    })),
  };
}
