/** Account owners as identity knows them, cached a short while (OWNER_CACHE_SECONDS). */
export { type Owner, OwnerDirectory } from './owners';
