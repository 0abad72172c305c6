/** Users' availability (issue #29 item 4): their choice, the gateways' presence reports and the offline timer. */
export { get as getAvailability, set as setAvailability, report as reportPresence } from './availability';
export { OfflineTimer } from './offline-timer';
