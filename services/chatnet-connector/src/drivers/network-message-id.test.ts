import { networkMessageId } from './sandbox.driver';

describe('the sandbox network message id', () => {
  it('never repeats, even for a burst of messages in the same milliseconds', () => {
    // Tens of thousands per millisecond here: the former milliseconds + six random digits repeated within a burst.
    const ids = Array.from({ length: 200_000 }, () => networkMessageId());
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is a long decimal string, like the real network ids', () => {
    expect(networkMessageId()).toMatch(/^\d{23}$/);
  });
});
