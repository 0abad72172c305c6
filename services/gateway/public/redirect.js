// Where the sign-in page may send the user afterwards: only a path on this site. `next` comes from the
// address bar, so anyone can craft it; browsers read "/\evil.com" as "//evil.com" and drop tabs and
// newlines while parsing, so a prefix check is not enough. The candidate is parsed as the browser would
// and kept only when it stays on our origin; anything else falls back to the default page.
// Loaded by login.html as a script, and by the tests through require().
(function (root) {
  function safeNextPath(next, origin, fallback) {
    if (typeof next !== 'string' || next === '') return fallback;
    // One leading slash followed by a path character, and no backslash or control character anywhere.
    if (!/^\/(?![/\\])/.test(next) || /[\\\u0000-\u001f\u007f]/.test(next)) return fallback;
    let url;
    try {
      url = new URL(next, origin);
    } catch (e) {
      return fallback;
    }
    if (url.origin !== new URL(origin).origin) return fallback;
    return url.pathname + url.search + url.hash;
  }
  if (typeof module === 'object' && module.exports) module.exports = { safeNextPath };
  else root.crmRedirect = { safeNextPath };
})(this);
