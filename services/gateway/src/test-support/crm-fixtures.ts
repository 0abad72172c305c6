// Sample crm answers shared by the mapper tests (not part of the build: tsconfig excludes src/test-support).
import type { crm } from '@crm/proto-types';

// crm's answers as the gRPC client decodes them, for the mappers' unit tests: `empty` has every optional value
// unset or "" (what proto3 sends for "none"), `full` has every one set.

export const ID = '7f3e1c52-0b4a-4c1e-9d2f-1a2b3c4d5e6f';
export const OTHER_ID = '00000000-0000-4000-8000-000000000001';
export const AT = '2031-01-02T03:04:05.000Z';

export function emptyContact(): crm.Contact__Output {
  return {
    id: ID,
    name: 'Ann',
    email: '',
    phone: '',
    source: 'manual',
    status: 'new',
    avatar: '',
    leadScore: 0,
    threadTypes: [],
    friends: [],
    notes: '',
    tags: [],
    lastActivity: AT,
    createdAt: AT,
    updatedAt: AT,
    dealValue: 0,
    customFieldsJson: '',
  };
}

export function fullContact(): crm.Contact__Output {
  return {
    ...emptyContact(),
    email: 'ann@example.com',
    phone: '+84912345678',
    statusId: OTHER_ID,
    assignedUserId: OTHER_ID,
    avatar: 'https://cdn.example.com/a.png',
    leadScore: 42,
    hasChatnet: true,
    chatnetUid: 'uid-1',
    threadTypes: ['user'],
    friends: [{ chatnetUid: 'uid-1', displayName: 'Ann', accountId: OTHER_ID }],
    notes: 'likes mornings',
    tags: ['vip'],
    dealValue: 12.5,
    customFieldsJson: '{"plan":"gold","seats":3,"active":true}',
  };
}

export function appointment(over: Partial<crm.Appointment__Output> = {}): crm.Appointment__Output {
  return {
    id: ID,
    contactId: OTHER_ID,
    contactName: 'Ann',
    title: 'Call',
    description: '',
    scheduledAt: '2031-05-06T07:08:00.000Z',
    duration: 60,
    type: 'meeting',
    location: '',
    status: 'scheduled',
    notes: '',
    createdAt: AT,
    updatedAt: AT,
    contact: null,
    ...over,
  };
}
