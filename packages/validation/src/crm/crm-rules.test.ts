import { issueOf } from '../test-support/issue-of';
import { crmRules as rules } from '../index';

describe('crm contract rules', () => {
  it('normaliseTags trims, drops empties and case-insensitive repeats, and bounds count and length', () => {
    expect(rules.normaliseTags([' VIP ', 'vip', '', 'b2b'])).toEqual(['VIP', 'b2b']);
    expect(issueOf(() => rules.normaliseTags(['x'.repeat(51)], 'addTags'))).toEqual({
      field: 'addTags',
      message: 'each tag must be at most 50 characters',
    });
    expect(issueOf(() => rules.normaliseTags(Array.from({ length: 51 }, (_, i) => `t${i}`)))).toEqual({
      field: 'tags',
      message: 'must have at most 50 tags',
    });
    expect(rules.normaliseTags(Array.from({ length: 50 }, (_, i) => `t${i}`))).toHaveLength(50);
  });

  it('contactSource lower-cases, falls back when empty, refuses other characters', () => {
    expect(rules.contactSource(' API ', 'manual')).toBe('api');
    expect(rules.contactSource('', 'manual')).toBe('manual');
    expect(issueOf(() => rules.contactSource('web site', 'manual'))?.field).toBe('source');
    expect(issueOf(() => rules.contactSource('x'.repeat(41), 'manual'))?.field).toBe('source');
  });

  it('dealValue: 0 when absent, never negative, below 10^12, whole cents', () => {
    expect(rules.dealValue(undefined)).toBe(0);
    expect(rules.dealValue(12.5)).toBe(12.5);
    expect(rules.dealValue(rules.MAX_DEAL_VALUE)).toBe(rules.MAX_DEAL_VALUE);
    for (const [bad, message] of [
      [-1, 'must not be negative'],
      [1e12, `must be at most ${rules.MAX_DEAL_VALUE}`],
      [1.005, 'must have at most 2 decimals'],
      [Number.NaN, 'must be a number'],
    ] as const) {
      expect(issueOf(() => rules.dealValue(bad))).toEqual({ field: 'dealValue', message });
    }
  });

  it('appointment type and duration: defaults, bounds and the message both sides show', () => {
    expect(rules.appointmentType(undefined)).toBe('meeting');
    expect(rules.appointmentType(' Call ')).toBe('call');
    expect(issueOf(() => rules.appointmentType('a b'))).toEqual({ field: 'type', message: rules.APPOINTMENT_TYPE_MESSAGE });
    expect(rules.appointmentDuration(0)).toBe(60);
    expect(rules.appointmentDuration(rules.MAX_DURATION_MINUTES)).toBe(rules.MAX_DURATION_MINUTES);
    expect(issueOf(() => rules.appointmentDuration(rules.MAX_DURATION_MINUTES + 1))).toEqual({ field: 'duration', message: rules.DURATION_MESSAGE });
    expect(issueOf(() => rules.appointmentDuration(1.5))?.field).toBe('duration');
  });

  it('status color and position', () => {
    expect(rules.statusColor('#22C55E')).toBe('#22c55e');
    expect(rules.statusColor('')).toBe('');
    expect(issueOf(() => rules.statusColor('red'))).toEqual({ field: 'color', message: rules.COLOR_MESSAGE });
    expect(rules.position(undefined)).toBe(0);
    expect(issueOf(() => rules.position(10_001))).toEqual({ field: 'position', message: 'must be an integer from 0 to 10000' });
  });

  it('custom field key and options', () => {
    expect(rules.fieldKey(' plan ')).toBe('plan');
    expect(issueOf(() => rules.fieldKey('Plan'))).toEqual({ field: 'key', message: rules.FIELD_KEY_MESSAGE });
    expect(rules.fieldOptions('select', [' a ', 'b'])).toEqual(['a', 'b']);
    expect(rules.fieldOptions('text', undefined)).toEqual([]);
    expect(issueOf(() => rules.fieldOptions('text', ['a']))?.message).toBe('are only for select fields');
    expect(issueOf(() => rules.fieldOptions('select', ['a', 'A']))?.message).toBe('lists "A" twice');
    expect(issueOf(() => rules.fieldOptions('select', ['']))?.message).toBe(rules.EMPTY_OPTION);
  });
});
