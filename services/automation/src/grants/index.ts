/** The gateway's grants per org: the origin of the calls automation makes on its own (issue #27 item 3). */
export { Grants } from './grants';
