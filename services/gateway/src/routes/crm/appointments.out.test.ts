import { appointmentOut, publicAppointmentOut } from './appointments.out';
import { appointment, AT, ID, OTHER_ID } from '../../test-support/crm-fixtures';

describe('appointment mappers', () => {
  it('appointmentOut: absent description, location and assignee are null', () => {
    expect(appointmentOut(appointment())).toEqual({
      id: ID,
      contactId: OTHER_ID,
      contactName: 'Ann',
      title: 'Call',
      description: null,
      scheduledAt: '2031-05-06T07:08:00.000Z',
      duration: 60,
      type: 'meeting',
      location: null,
      assignedUserId: null,
      status: 'scheduled',
      createdAt: AT,
      updatedAt: AT,
    });
    expect(appointmentOut(appointment({ description: 'd', location: 'HQ', assignedUserId: OTHER_ID }))).toMatchObject({
      description: 'd',
      location: 'HQ',
      assignedUserId: OTHER_ID,
    });
  });

  it('publicAppointmentOut: date and time (UTC), notes null when empty, contact only when given', () => {
    const out = publicAppointmentOut(appointment());
    expect(out).toEqual({
      id: ID,
      contactId: OTHER_ID,
      appointmentDate: '2031-05-06',
      appointmentTime: '07:08',
      type: 'meeting',
      notes: null,
      status: 'scheduled',
      title: 'Call',
      createdAt: AT,
      updatedAt: AT,
    });
    const withContact = publicAppointmentOut(appointment({ notes: 'bring docs' }), {
      id: OTHER_ID,
      name: 'Ann',
      phone: '',
      email: 'ann@example.com',
    });
    expect(withContact.notes).toBe('bring docs');
    expect(withContact.contact).toEqual({ id: OTHER_ID, fullName: 'Ann', phone: null, email: 'ann@example.com' });
  });
});
