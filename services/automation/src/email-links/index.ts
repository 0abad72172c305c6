/**
 * The signed unsubscribe and open-pixel links of campaign emails (`/u/<token>`, `/o/<token>.gif`): the HMAC signer
 * and the URLs. No Deps: deps.ts imports this face.
 */
export { type LinkPurpose, LinkSigner, pixelUrl, unsubscribeUrl } from './links';
