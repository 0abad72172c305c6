import { issueOf } from './test-support/issue-of';
import { bulkIds, isoTimestamp, isUuid, normaliseEmail, oneOf, optionalEmail, optionalOneOf, optionalText, requireText, requireUuid } from './index';

describe('ids', () => {
  it('isUuid takes any-case UUIDs only', () => {
    expect(isUuid('7F3E1C52-0B4A-4C1E-9D2F-1A2B3C4D5E6F')).toBe(true);
    for (const bad of [undefined, null, '', 'abc', '7f3e1c52-0b4a-4c1e-9d2f-1a2b3c4d5e6', '7f3e1c52-0b4a-4c1e-9d2f-1a2b3c4d5e6fa', "' OR 1=1 --"]) {
      expect(isUuid(bad)).toBe(false);
    }
  });

  it('requireUuid lower-cases a good id and names the field of a bad one', () => {
    expect(requireUuid('7F3E1C52-0B4A-4C1E-9D2F-1A2B3C4D5E6F', 'contactId')).toBe('7f3e1c52-0b4a-4c1e-9d2f-1a2b3c4d5e6f');
    expect(issueOf(() => requireUuid('nope', 'contactId'))).toEqual({ field: 'contactId', message: 'must be an id (UUID)' });
  });
});

describe('bulkIds', () => {
  const A = '7f3e1c52-0b4a-4c1e-9d2f-1a2b3c4d5e6f';
  const B = '00000000-0000-4000-8000-000000000001';

  it('deduplicates ids in any case and sets the malformed apart', () => {
    expect(bulkIds([A, A.toUpperCase(), ` ${B} `, 'nope', 'nope'], 10)).toEqual({ valid: [A, B], malformed: ['nope'] });
  });

  it('refuses an empty list and more distinct ids than the bound', () => {
    expect(issueOf(() => bulkIds([], 10))).toEqual({ field: 'ids', message: 'must list at least one id' });
    expect(issueOf(() => bulkIds(undefined, 10))).toEqual({ field: 'ids', message: 'must list at least one id' });
    expect(issueOf(() => bulkIds([A, B, 'x'], 2))).toEqual({ field: 'ids', message: 'must list at most 2 ids' });
    // Repeats count once.
    expect(bulkIds([A, A, B], 2).valid).toHaveLength(2);
  });
});

describe('text', () => {
  it('requireText trims, refuses empty, too long and NUL', () => {
    expect(requireText('  Ann  ', 'name')).toBe('Ann');
    expect(issueOf(() => requireText('   ', 'name'))).toEqual({ field: 'name', message: 'is required' });
    expect(issueOf(() => requireText(undefined, 'name'))).toEqual({ field: 'name', message: 'is required' });
    expect(requireText('x'.repeat(5), 'name', 5)).toBe('xxxxx');
    expect(issueOf(() => requireText('x'.repeat(6), 'name', 5))).toEqual({ field: 'name', message: 'must be at most 5 characters' });
    expect(issueOf(() => requireText('a\u0000b', 'name'))).toEqual({ field: 'name', message: 'must not contain NUL characters' });
  });

  it('optionalText takes absent as empty and still bounds the length', () => {
    expect(optionalText(undefined, 'notes')).toBe('');
    expect(optionalText(' hi ', 'notes')).toBe('hi');
    expect(issueOf(() => optionalText('x'.repeat(201), 'notes'))).toEqual({ field: 'notes', message: 'must be at most 200 characters' });
  });
});

describe('choices', () => {
  const STATUSES = ['open', 'closed'] as const;

  it('oneOf requires one of the values', () => {
    expect(oneOf('open', STATUSES, 'status')).toBe('open');
    expect(issueOf(() => oneOf('', STATUSES, 'status'))).toEqual({ field: 'status', message: 'must be one of open, closed' });
    expect(issueOf(() => oneOf('OPEN', STATUSES, 'status'))).toEqual({ field: 'status', message: 'must be one of open, closed' });
  });

  it('optionalOneOf answers undefined for absent or empty, and still refuses others', () => {
    expect(optionalOneOf(undefined, STATUSES, 'status')).toBeUndefined();
    expect(optionalOneOf('', STATUSES, 'status')).toBeUndefined();
    expect(optionalOneOf('closed', STATUSES, 'status')).toBe('closed');
    expect(issueOf(() => optionalOneOf('shut', STATUSES, 'status'))).toEqual({ field: 'status', message: 'must be one of open, closed' });
  });
});

describe('email', () => {
  it('normaliseEmail trims and lower-cases, and refuses empty or malformed', () => {
    expect(normaliseEmail(' Ann@Example.COM ')).toBe('ann@example.com');
    for (const bad of ['', 'ann', 'ann@example', 'a b@example.com', `${'a'.repeat(250)}@x.io`]) {
      expect(issueOf(() => normaliseEmail(bad, 'inviteEmail'))).toEqual({ field: 'inviteEmail', message: 'must be a valid email address' });
    }
  });

  it('optionalEmail allows empty and checks anything else', () => {
    expect(optionalEmail(undefined)).toBe('');
    expect(optionalEmail('   ')).toBe('');
    expect(optionalEmail('Bo@Example.com')).toBe('bo@example.com');
    expect(issueOf(() => optionalEmail('bo@'))).toEqual({ field: 'email', message: 'must be a valid email address' });
  });
});

describe('isoTimestamp', () => {
  it('takes dates and timestamps PostgreSQL can store, and names the field otherwise', () => {
    expect(isoTimestamp('2025-03-01', 'scheduledAt').toISOString()).toBe('2025-03-01T00:00:00.000Z');
    expect(isoTimestamp('2025-03-01T10:30:00+02:00', 'scheduledAt').toISOString()).toBe('2025-03-01T08:30:00.000Z');
    const message = 'must be an ISO 8601 date or timestamp in years 0001-9999';
    for (const bad of [undefined, '', 'tomorrow', '+010000-01-01T00:00:00Z', '0000-01-01T00:00:00Z']) {
      expect(issueOf(() => isoTimestamp(bad, 'scheduledAt'))).toEqual({ field: 'scheduledAt', message });
    }
  });
});
