import { Router } from 'express';
import type { RouteDeps, ServiceRoutes } from '../deps';
import { appointmentRoutes } from './appointments.routes';
import { contactStatusRoutes } from './contact-statuses.routes';
import { contactRoutes } from './contacts.routes';
import { customerListRoutes } from './customer-lists.routes';
import { noteRoutes } from './notes.routes';
import { publicCrmRoutes } from './public-api.routes';

// The face of the crm routes: other modules (docs, contact fields, merges) import these names from here only.
export { appointmentOut, publicAppointmentOut } from './appointments.out';
export { AppointmentPatch, AppointmentQuery, NewAppointment, PublicAppointmentQuery, PublicNewAppointment } from './appointments.schemas';
export { statusOut } from './contact-statuses.out';
export { NewStatus, StatusPatch } from './contact-statuses.schemas';
export { contactOut, customFieldsOf, detailOut, friendOut, memberOut, publicContactOut } from './contacts.out';
export { byRule, position } from './common.schemas';
export {
  BulkContacts,
  BulkIds,
  ContactPatch,
  ContactQuery,
  contactFiltersOf,
  contactListFilters,
  customFieldFilters,
  customFieldsJson,
  NewContact,
  PublicContactFields,
  PublicContactQuery,
} from './contacts.schemas';
export { customerListBriefOut, customerListCreatedOut, customerListOut } from './customer-lists.out';
export { CustomerListPatch, NewCustomerList } from './customer-lists.schemas';
export { noteOut } from './notes.out';
export { Note } from './notes.schemas';

/** Contacts, custom statuses and appointments (internal, bearer) and their public API (API key). */
export function crmRoutes({ clients }: RouteDeps): ServiceRoutes {
  const internal = Router();
  const pub = Router();
  // A getter, so crm's client is made on the first request that needs it.
  const crm = () => clients.crm;

  // Saved views (GET /contacts?viewId=) are messaging's.
  contactRoutes(internal, crm, () => clients.messagingViews);
  noteRoutes(internal, crm);
  contactStatusRoutes(internal, crm);
  appointmentRoutes(internal, crm);
  customerListRoutes(internal, crm);
  publicCrmRoutes(pub, crm);

  return { internal, public: pub };
}
