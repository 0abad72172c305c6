// Tiny API client for the settings pages: the access token lives in sessionStorage (gone with the tab),
// a 401 triggers one refresh with the refresh token, and a failed refresh sends the user to sign in.
(function () {
  const store = window.sessionStorage;
  const auth = {
    get token() {
      return store.getItem('crm.token');
    },
    save(result) {
      store.setItem('crm.token', result.token);
      store.setItem('crm.refresh', result.refreshToken);
      store.setItem('crm.user', JSON.stringify(result.user));
    },
    clear() {
      ['crm.token', 'crm.refresh', 'crm.user'].forEach((k) => store.removeItem(k));
    },
    user() {
      try {
        return JSON.parse(store.getItem('crm.user') || 'null');
      } catch {
        return null;
      }
    },
  };

  async function refresh() {
    const refreshToken = store.getItem('crm.refresh');
    if (!refreshToken) return false;
    const res = await fetch('/api/v1/auth/refresh', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refreshToken }),
    });
    if (!res.ok) return false;
    auth.save(await res.json());
    return true;
  }

  function toLogin() {
    auth.clear();
    location.href = '/login?next=' + encodeURIComponent(location.pathname);
  }

  /** JSON request; resolves to {ok, status, body}; never throws for HTTP errors. */
  async function api(method, path, body, retried) {
    const headers = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (auth.token) headers.authorization = 'Bearer ' + auth.token;
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (res.status === 401 && auth.token && !retried) {
      if (await refresh()) return api(method, path, body, true);
      toLogin();
    }
    const text = await res.text();
    let parsed = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { ok: res.ok, status: res.status, body: parsed };
  }

  function errorText(res) {
    const e = res.body && res.body.error;
    return e ? e.message : 'Request failed (HTTP ' + res.status + ')';
  }

  window.crm = { api, auth, toLogin, errorText };
})();
