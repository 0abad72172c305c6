import { Router } from 'express';
import type { RouteDeps, ServiceRoutes } from '../deps';
import { responseContract } from '../../http/response-contract';
import { appointmentRoutes } from './appointments.routes';
import { contactStatusRoutes } from './contact-statuses.routes';
import { contactRoutes } from './contacts.routes';
import { customerListRoutes } from './customer-lists.routes';
import { noteRoutes } from './notes.routes';
import { publicAppointmentRoutes, publicContactRoutes } from './public-api.routes';

// The face of the crm routes: other modules (docs, contact fields, merges) import these names from here only.
export { appointmentOut, publicAppointmentOut } from './appointments.out';
export {
  Appointment,
  AppointmentPatch,
  AppointmentQuery,
  NewAppointment,
  PublicAppointment,
  PublicAppointmentQuery,
  PublicNewAppointment,
} from './appointments.schemas';
export { statusOut } from './contact-statuses.out';
export { NewStatus, Status, StatusPatch } from './contact-statuses.schemas';
export { contactOut, customFieldsOf, detailOut, friendOut, memberOut, publicContactOut } from './contacts.out';
export { byRule, position } from './common.schemas';
export {
  BulkContacts,
  BulkIds,
  BulkResult,
  Contact,
  ContactDetail,
  ContactPatch,
  ContactQuery,
  contactFiltersOf,
  contactListFilters,
  customFieldFilters,
  CustomFieldValues,
  customFieldsJson,
  Friend,
  MemberContact,
  NewContact,
  nextCursorField,
  PublicContact,
  PublicContactDetail,
  PublicContactFields,
  PublicContactQuery,
} from './contacts.schemas';
export { customerListBriefOut, customerListCreatedOut, customerListOut } from './customer-lists.out';
export { CustomerList, CustomerListBrief, CustomerListCreated, CustomerListPatch, NewCustomerList } from './customer-lists.schemas';
export { noteOut } from './notes.out';
export { ContactNote, Note } from './notes.schemas';

/** The crm areas, in the document's order (docs/index.ts): internal (bearer), then the public API (API key). */
export const crmAreas = [contactRoutes, noteRoutes, contactStatusRoutes, appointmentRoutes, customerListRoutes];
export const publicCrmAreas = [publicContactRoutes, publicAppointmentRoutes];

/** Contacts, notes, custom statuses, appointments and customer lists (internal, bearer) and their public API (API key). */
export function crmRoutes(deps: RouteDeps): ServiceRoutes {
  const contract = responseContract(deps.config);
  return {
    internal: Router().use(...crmAreas.map((area) => area.router(deps, contract))),
    public: Router().use(...publicCrmAreas.map((area) => area.router(deps, contract))),
  };
}
