import { Router } from 'express';
import type { CrmClient } from './crm-client';
import { ctxOf } from '../../http/principal';
import { body, dateRange, pageParams, query } from '../../http/validate';
import { appointmentOut } from './appointments.out';
import { AppointmentPatch, AppointmentQuery, NewAppointment } from './appointments.schemas';

/** Appointments (internal, bearer). */
export function appointmentRoutes(internal: Router, crm: () => CrmClient): void {
  internal.get('/appointments', async (req, res) => {
    const q = query(req, AppointmentQuery);
    const { dateFrom, dateTo } = dateRange(q.dateFrom, q.dateTo, 'dateFrom', 'dateTo');
    const out = await crm().ListAppointments({ ...pageParams(req, 50), ...q, dateFrom, dateTo }, ctxOf(req, res));
    res.json({ data: out.data.map(appointmentOut), pagination: out.pagination });
  });
  internal.post('/appointments', async (req, res) => {
    const a = await crm().CreateAppointment(body(req, NewAppointment), ctxOf(req, res));
    res.status(201).json(appointmentOut(a));
  });
  internal.get('/appointments/:id', async (req, res) => {
    res.json(appointmentOut(await crm().GetAppointment({ id: req.params.id }, ctxOf(req, res))));
  });
  internal.put('/appointments/:id', async (req, res) => {
    res.json(appointmentOut(await crm().UpdateAppointment({ id: req.params.id, ...body(req, AppointmentPatch) }, ctxOf(req, res))));
  });
  internal.delete('/appointments/:id', async (req, res) => {
    await crm().DeleteAppointment({ id: req.params.id }, ctxOf(req, res));
    res.status(204).end();
  });
}
