/**
 * Who is on the network: LookupPhone (crm's, through any connected account) and FindUser (by phone or uid, paced per
 * account, cached a day), each with the holder's half a peer forwards to.
 */
export { accountNotConnected, authorizeOutreach, findHere, findUser, type FoundUser } from './find-user';
export { lookupDigits, lookupHere, lookupPhone, type PhoneLookupResult } from './phone-lookup';
