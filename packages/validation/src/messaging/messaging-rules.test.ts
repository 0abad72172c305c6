import { issueOf } from '../test-support/issue-of';
import { messagingRules as rules } from '../index';

describe('messaging contract rules', () => {
  it('reactionEmoji: one emoji without spaces, at most 32 characters; empty only where it takes a reaction back', () => {
    expect(rules.reactionEmoji(' 👍 ')).toBe('👍');
    expect(rules.reactionEmoji('', true)).toBe('');
    expect(issueOf(() => rules.reactionEmoji(''))).toEqual({ field: 'emoji', message: 'is required' });
    expect(issueOf(() => rules.reactionEmoji('two words'))).toEqual({ field: 'emoji', message: rules.REACTION_EMOJI_MESSAGE });
    expect(issueOf(() => rules.reactionEmoji('x'.repeat(rules.REACTION_EMOJI_MAX + 1), true))).toEqual({
      field: 'emoji',
      message: rules.REACTION_EMOJI_TOO_LONG,
    });
  });
  it('contentType: text when empty, a short type name otherwise', () => {
    expect(rules.contentType(undefined)).toBe('text');
    expect(rules.contentType(' image ')).toBe('image');
    expect(rules.contentType('application/pdf')).toBe('application/pdf');
    expect(issueOf(() => rules.contentType('text plain'))).toEqual({ field: 'contentType', message: rules.CONTENT_TYPE_MESSAGE });
    expect(issueOf(() => rules.contentType('x'.repeat(51)))?.field).toBe('contentType');
  });

  it('priorityOf: one of the priorities, "" for none; absent or unknown names the field', () => {
    expect(rules.priorityOf('urgent')).toBe('urgent');
    expect(rules.priorityOf('')).toBeNull();
    expect(issueOf(() => rules.priorityOf(undefined))?.field).toBe('priority');
    expect(issueOf(() => rules.priorityOf('critical', 'actions[1].priority'))).toEqual({
      field: 'actions[1].priority',
      message: rules.PRIORITY_MESSAGE,
    });
  });

  it('macroActions: each action keeps only its own fields; a bad one names actions[i].field', () => {
    expect(
      rules.macroActions([
        { type: 'send_message', content: 'Hi' },
        { type: 'assign', assigneeId: '' },
        { type: 'set_priority', priority: 'low' },
        { type: 'snooze', snoozedUntil: '2030-01-02T03:04:05+07:00' },
      ]),
    ).toEqual([
      { type: 'send_message', content: 'Hi', contentType: 'text' },
      { type: 'assign', assigneeId: null },
      { type: 'set_priority', priority: 'low' },
      { type: 'snooze', snoozedUntil: '2030-01-01T20:04:05.000Z' },
    ]);
    expect(issueOf(() => rules.macroActions([]))?.field).toBe('actions');
    expect(
      issueOf(() =>
        rules.macroActions([
          { type: 'add_note', content: 'x' },
          { type: 'send_message', content: 'x', contentType: 'a b' },
        ]),
      )?.field,
    ).toBe('actions[1].contentType');
    expect(issueOf(() => rules.macroActions([{ type: 'assign', assigneeId: 'bob' }]))?.field).toBe('actions[0].assigneeId');
    expect(issueOf(() => rules.macroActions([{ type: 'set_status', status: 'snoozed' }]))).toEqual({
      field: 'actions[0].status',
      message: rules.MACRO_STATUS_MESSAGE,
    });
    expect(issueOf(() => rules.macroActions([{ type: 'snooze', minutes: 5, snoozedUntil: '2030-01-01T00:00:00Z' }]))).toEqual({
      field: 'actions[0].minutes',
      message: rules.SNOOZE_ONE_OF,
    });
    expect(issueOf(() => rules.macroActions([{ type: 'add_note', content: 'a\u0000b' }]))?.field).toBe('actions[0].content');
    expect(issueOf(() => rules.macroActions([{ type: 'jump' }]))?.field).toBe('actions[0].type');
  });

  it('folderColor: #rgb or #rrggbb, upper-cased; anything else names the field', () => {
    expect(rules.folderColor(' #3b82f6 ')).toBe('#3B82F6');
    expect(rules.folderColor('#abc')).toBe('#ABC');
    expect(issueOf(() => rules.folderColor('blue'))).toEqual({ field: 'color', message: rules.FOLDER_COLOR_MESSAGE });
    expect(issueOf(() => rules.folderColor('#12345'))?.field).toBe('color');
  });

  it('limits are stated once: a preset’s content is a message body', () => {
    expect(rules.PRESET_TEXT_MAX.content).toBe(rules.CONTENT_MAX);
    expect(rules.TOO_MANY_ATTACHMENTS).toBe('at most 10 attachments per message');
    expect(rules.FOLDER_CONVERSATIONS_TOO_MANY).toBe('must list at most 500 conversations');
  });
});
