import { isKnownEventType } from '@crm/events';
import { EVENTS } from './events';

test('every event type messaging publishes or consumes has its schema in @crm/events', () => {
  expect(Object.values(EVENTS).filter((type) => !isKnownEventType(type))).toEqual([]);
});
