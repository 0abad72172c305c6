/**
 * The http_request step of rules: the client that sends it through the SSRF guard (AUTOMATION_ALLOWED_PRIVATE_ADDRESSES)
 * with its signature (signing.ts), and a rule's new signing secret. No Deps: deps.ts imports this face.
 */
export { HttpStepClient, HttpStepError } from './http-step';
export { generateSecret } from './signing';
