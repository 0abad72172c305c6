/**
 * The org's email channel: its own SMTP server (the password encrypted, the host judged by the SSRF guard) or the
 * server's SMTP_URL; the API that reads, saves, deletes and tests it; the channel an email campaign sends through.
 */
export * as emailChannel from './channel';
export { aad, ChannelProblem, channelFor, channelUnavailable, hasChannel, type ResolvedChannel, scrub, validEmail } from './channel';
