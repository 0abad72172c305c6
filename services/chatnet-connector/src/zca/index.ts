/**
 * The real network's driver (zca-js) and what only it needs: its errors, group names and sender profiles looked up
 * and cached, phone lookups, file kinds. app.ts loads this face only with CHATNET_DRIVER=zca: zca-js and its
 * dependencies are a sixth of what every service loads.
 */
export { ZcaDriver } from './zca.driver';
