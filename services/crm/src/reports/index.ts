/** Custom reports (CSV), as app.ts wires them: crm.v1.ReportsService and the report worker. */
export { reportsFeature } from './reports.feature';
