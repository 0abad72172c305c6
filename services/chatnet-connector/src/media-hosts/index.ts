/**
 * The hosts inbound photos and files may be downloaded from (CHATNET_MEDIA_HOSTS). Its own module because config.ts
 * reads the list: config is loaded before tracing starts, so what it imports must load nothing else.
 */
export { isMediaHost, parseMediaHosts } from './media-hosts';
