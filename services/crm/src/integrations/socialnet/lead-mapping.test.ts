import { AppError } from '@crm/grpc-kit';
import { leadFromGraph } from './graph.driver';
import { leadContactFields, leadNotes } from './lead-import';

const lead = (over: Partial<Parameters<typeof leadContactFields>[0]> = {}) => ({
  id: 'L1',
  formId: 'F1',
  createdAt: new Date('2024-05-01T08:00:00Z'),
  fullName: 'Lan Pham',
  phone: '0912 345 678',
  email: 'Lan@Example.TEST',
  fields: {},
  ...over,
});

describe('a lead as a contact', () => {
  it('is validated and normalised like any contact', () => {
    expect(leadContactFields(lead(), 'VN')).toEqual({ name: 'Lan Pham', phone: '+84912345678', email: 'lan@example.test' });
    expect(leadContactFields(lead({ fullName: '', email: '' }), 'VN')).toEqual({ name: '', phone: '+84912345678', email: '' });
  });

  it('needs a name or a phone; a bad phone or email names its field', () => {
    const reason = (l: ReturnType<typeof lead>) => {
      try {
        leadContactFields(l, 'VN');
        return 'accepted';
      } catch (err) {
        return (err as AppError).details?.[0].field;
      }
    };
    expect(reason(lead({ fullName: ' ', phone: '' }))).toBe('fullName');
    expect(reason(lead({ phone: 'call me' }))).toBe('phone');
    expect(reason(lead({ email: 'nope' }))).toBe('email');
  });

  it('keeps the other answers in the notes', () => {
    expect(leadNotes(lead({ fields: { Budget: '5000', City: 'Hanoi' } }), 'Promo')).toBe(
      'Lead L1 from form "Promo" (2024-05-01T08:00:00.000Z)\nBudget: 5000\nCity: Hanoi',
    );
  });
});

describe('a graph lead', () => {
  it('maps the known questions and keeps the rest as fields', () => {
    const l = leadFromGraph(
      {
        id: '42',
        created_time: '2024-05-01T08:00:00+0000',
        field_data: [
          { name: 'first_name', values: ['Lan'] },
          { name: 'last_name', values: ['Pham'] },
          { name: 'phone_number', values: ['+84912345678'] },
          { name: 'email', values: ['lan@example.test'] },
          { name: 'interests', values: ['bikes', 'shoes'] },
        ],
      },
      'F1',
    );
    expect(l).toEqual({
      id: '42',
      formId: 'F1',
      createdAt: new Date('2024-05-01T08:00:00Z'),
      fullName: 'Lan Pham',
      phone: '+84912345678',
      email: 'lan@example.test',
      fields: { interests: 'bikes, shoes' },
    });
  });
});
