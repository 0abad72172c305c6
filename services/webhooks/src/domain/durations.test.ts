import { parseDuration, parseSchedule } from './durations';

describe('durations', () => {
  it('parses the retry schedule', () => {
    expect(parseSchedule('5s,5m,30m,2h,5h,10h')).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000]);
    expect(parseSchedule('200ms, 500ms,1s')).toEqual([200, 500, 1000]);
    expect(parseDuration('5d')).toBe(432_000_000);
    expect(() => parseSchedule('soon')).toThrow('is not a duration');
    expect(() => parseSchedule('')).toThrow('at least one');
  });
});
