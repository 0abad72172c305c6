import { page } from '../common.schemas';
import { routeArea } from '../../http/route-area';
import { dateRange } from '../../http/validate';
import type { RouteDeps } from '../deps';
import { appointmentOut } from './appointments.out';
import { Appointment, AppointmentPatch, AppointmentQuery, NewAppointment } from './appointments.schemas';

/** Appointments (internal, bearer). */
export const appointmentRoutes = routeArea({ prefix: '/api/v1', auth: 'bearer', tag: 'Appointments' });
const crm = (deps: RouteDeps) => deps.clients.crm;

appointmentRoutes.route('GET /appointments', {
  summary: 'Appointments, filtered by status, contact and date',
  query: AppointmentQuery,
  paging: { limit: 50, max: 100 },
  response: page(Appointment),
  handler: async ({ query: q, page, ctx, deps }) => {
    const { dateFrom, dateTo } = dateRange(q.dateFrom, q.dateTo, 'dateFrom', 'dateTo');
    const out = await crm(deps).ListAppointments({ ...page, ...q, dateFrom, dateTo }, ctx);
    return { data: out.data.map(appointmentOut), pagination: out.pagination! };
  },
});
appointmentRoutes.route('POST /appointments', {
  summary: 'Schedule an appointment with a contact',
  body: NewAppointment,
  status: 201,
  response: Appointment,
  errors: [404],
  handler: async ({ body, ctx, deps }) => appointmentOut(await crm(deps).CreateAppointment(body, ctx)),
});
appointmentRoutes.route('GET /appointments/:id', {
  summary: 'One appointment',
  response: Appointment,
  handler: async ({ param, ctx, deps }) => appointmentOut(await crm(deps).GetAppointment({ id: param('id') }, ctx)),
});
appointmentRoutes.route('PUT /appointments/:id', {
  summary: 'Reschedule, complete, cancel or edit an appointment',
  body: AppointmentPatch,
  response: Appointment,
  handler: async ({ param, body, ctx, deps }) => appointmentOut(await crm(deps).UpdateAppointment({ id: param('id'), ...body }, ctx)),
});
appointmentRoutes.route('DELETE /appointments/:id', {
  summary: 'Delete an appointment',
  status: 204,
  response: null,
  handler: async ({ param, ctx, deps }) => {
    await crm(deps).DeleteAppointment({ id: param('id') }, ctx);
  },
});
