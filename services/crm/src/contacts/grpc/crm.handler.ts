import type { HandlersFor } from '@crm/grpc-kit';
import type { ContactsDeps } from '../deps';
import * as appointments from '../domain/appointments';
import * as contacts from '../domain/contacts';
import { bulkUpdate } from '../domain/contacts-bulk';
import * as lists from '../domain/customer-lists';
import * as notes from '../domain/notes';
import { linkOutreachContact } from '../domain/outreach-contact';
import * as statuses from '../domain/statuses';

/** crm.v1.CrmService: decode, call the domain, return; errors are mapped by grpc-kit. */
export function crmHandlers(deps: ContactsDeps): HandlersFor<'crm.v1.CrmService'> {
  return {
    // The gateway's grant for crm to act for the org on its own (issue #27): kept, and sent with its workers' calls.
    RenewGrant: async (req, ctx) => {
      await deps.grants.renew(ctx, req.grant);
      return { ok: true };
    },
    ListContacts: (req, ctx) => contacts.list(deps, ctx, req),
    GetContact: (req, ctx) => contacts.detail(deps, ctx, req.id, req.parts),
    CreateContact: (req, ctx) => contacts.create(deps, ctx, req),
    UpdateContact: (req, ctx) => contacts.update(deps, ctx, req),
    DeleteContact: (req, ctx) => contacts.remove(deps, ctx, req.id),
    BulkUpdateContacts: (req, ctx) => bulkUpdate(deps, ctx, req),
    ListFriends: (req, ctx) => contacts.friendRecords(deps, ctx, req.id),
    AddNote: (req, ctx) => notes.add(deps, ctx, req),
    UpdateNote: (req, ctx) => notes.update(deps, ctx, req),
    DeleteNote: (req, ctx) => notes.remove(deps, ctx, req),

    ListContactStatuses: (_req, ctx) => statuses.list(deps, ctx),
    GetContactStatus: (req, ctx) => statuses.detail(deps, ctx, req.id),
    CreateContactStatus: (req, ctx) => statuses.create(deps, ctx, req),
    UpdateContactStatus: (req, ctx) => statuses.update(deps, ctx, req),
    DeleteContactStatus: (req, ctx) => statuses.remove(deps, ctx, req.id),

    ListAppointments: (req, ctx) => appointments.list(deps, ctx, req),
    GetAppointment: (req, ctx) => appointments.get(deps, ctx, req.id),
    CreateAppointment: (req, ctx) => appointments.create(deps, ctx, req),
    UpdateAppointment: (req, ctx) => appointments.update(deps, ctx, req),
    DeleteAppointment: (req, ctx) => appointments.remove(deps, ctx, req.id),

    UpsertChatnetContact: (req, ctx) => contacts.upsertChatnet(deps, ctx, req),
    UpsertChatnetContacts: (req, ctx) => contacts.upsertChatnetMany(deps, ctx, req),
    LinkOutreachContact: (req, ctx) => linkOutreachContact(deps, ctx, req),
    GetContactBrief: (req, ctx) => contacts.brief(deps, ctx, req.id),
    PatchContact: (req, ctx) => contacts.patch(deps, ctx, req),

    ListCustomerLists: (_req, ctx) => lists.list(deps, ctx),
    CreateCustomerList: (req, ctx) => lists.create(deps, ctx, req),
    UpdateCustomerList: (req, ctx) => lists.update(deps, ctx, req),
    DeleteCustomerList: (req, ctx) => lists.remove(deps, ctx, req.id),
    ActivateCustomerList: (req, ctx) => lists.activate(deps, ctx, req.id),
    PauseCustomerList: (req, ctx) => lists.pause(deps, ctx, req.id),
    ListCustomerListMembers: (req, ctx) => lists.members(deps, ctx, req),
    GetCustomerList: (req, ctx) => lists.get(deps, ctx, req.id),
    ResolveListMembers: (req, ctx) => lists.resolveMembers(deps, ctx, req),
  };
}
