import { ZaloApiError } from 'zca-js';

/**
 * Which failures of a zca-js cookie login mean "the network no longer accepts this stored session" (a new QR
 * login is needed) rather than "the network could not be reached now" (retried with back-off).
 *
 * zca-js 2.2.0 raises its own `ZaloApiError` (whose `name` is "ZcaApiError", so matching the name is fragile:
 * match the class) for everything it detects, network trouble included. What it raises when the network refuses
 * the session, read from its compiled `zalo.js` `loginCookie`:
 * - "Đăng nhập thất bại" ("login failed"): getLoginInfo answered without login info, which is what the network
 *   does for cookies it logged out or let expire (the answer then carries no encrypted login data);
 * - "Khởi tạo ngữ cảnh thất bại." ("context setup failed"): the login answered without the session key or uid;
 * - "Missing required params": the stored credentials lack imei, cookie or user agent.
 * Everything else stays temporary: fetch failures (DNS, TLS, proxy, reset; not ZaloApiError at all) and the
 * library's HTTP-status errors ("Failed to fetch login info: <status text>", "Failed to fetch server info: …"),
 * which a network that is down or overloaded also produces.
 */
const LOGIN_REFUSED_MESSAGES = new Set(['Đăng nhập thất bại', 'Khởi tạo ngữ cảnh thất bại.', 'Missing required params']);

export function isSessionRefused(err: unknown): err is ZaloApiError {
  return err instanceof ZaloApiError && LOGIN_REFUSED_MESSAGES.has(err.message.trim());
}
