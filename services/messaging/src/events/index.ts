/** The consumers of other services' events (and messaging's own), as app.ts starts them. */
export { createConsumers } from './consumers';
