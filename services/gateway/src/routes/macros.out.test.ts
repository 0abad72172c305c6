import { macroOut, macroRunOut } from './macros.out';

const ID = '6f1c2f0e-8a51-4c6b-9a3e-0c7a1f1b2d3e';
const AT = '2026-01-02T03:04:05.000Z';

describe('macro mappers', () => {
  it('macroOut: each action with only its own fields; "" (nobody, no team, no priority) reads null; no owner is null', () => {
    const out = macroOut({
      id: ID,
      name: 'Escalate',
      shared: true,
      actions: [
        { type: 'send_message', content: 'Hi', contentType: 'text' },
        { type: 'add_note', content: 'n' },
        { type: 'assign', assigneeId: '', teamId: '' },
        { type: 'assign', assigneeId: ID },
        { type: 'set_status', status: 'closed' },
        { type: 'set_priority', priority: '' },
        { type: 'set_priority', priority: 'high' },
        { type: 'add_to_folder', folderId: ID },
        { type: 'snooze', minutes: 30 },
        { type: 'snooze', snoozedUntil: AT },
      ],
      createdAt: AT,
      updatedAt: AT,
    });
    expect(out).toEqual({
      id: ID,
      name: 'Escalate',
      shared: true,
      ownerId: null,
      actions: [
        { type: 'send_message', content: 'Hi', contentType: 'text' },
        { type: 'add_note', content: 'n' },
        { type: 'assign', assigneeId: null, teamId: null },
        { type: 'assign', assigneeId: ID },
        { type: 'set_status', status: 'closed' },
        { type: 'set_priority', priority: null },
        { type: 'set_priority', priority: 'high' },
        { type: 'add_to_folder', folderId: ID },
        { type: 'snooze', minutes: 30 },
        { type: 'snooze', snoozedUntil: AT },
      ],
      createdAt: AT,
      updatedAt: AT,
    });
  });

  it('macroRunOut: one result per action in order, error null when it succeeded', () => {
    expect(
      macroRunOut({
        results: [
          { type: 'add_note', ok: true, error: null },
          { type: 'assign', ok: false, error: { code: 'permission_denied', message: 'no' } },
        ],
      }),
    ).toEqual({
      results: [
        { type: 'add_note', ok: true, error: null },
        { type: 'assign', ok: false, error: { code: 'permission_denied', message: 'no' } },
      ],
    });
  });
});
