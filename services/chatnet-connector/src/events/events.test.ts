import { isKnownEventType } from '@crm/events';
import { EVENTS } from './events';

test('every event type the connector publishes has its schema in @crm/events', () => {
  expect(Object.values(EVENTS).filter((type) => !isKnownEventType(type))).toEqual([]);
});
