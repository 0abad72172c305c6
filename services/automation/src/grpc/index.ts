/** automation.v1.AutomationService: the handlers over every module's requests. */
export { automationHandlers } from './automation.handler';
