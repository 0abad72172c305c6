/**
 * The auto-close worker: claims the conversations whose auto-close is due (auto-close's rows), sends the org's
 * `autoCloseMessage` and closes them. Apart from auto-close because it sends: send arms auto-close, so the two
 * in one module would import each other.
 */
export { AutoCloser } from './closer';
