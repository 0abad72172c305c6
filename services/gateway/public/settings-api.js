// The API & webhook settings page: API key, webhook, AI assistant summary, API documentation.
(function () {
  if (!crm.auth.token) return crm.toLogin();
  const $ = (id) => document.getElementById(id);
  const user = crm.auth.user();
  $('who').textContent = user ? user.fullName + ' (' + user.role + ')' : '';
  $('logout').addEventListener('click', async () => {
    await crm.api('POST', '/api/v1/auth/logout', { refreshToken: sessionStorage.getItem('crm.refresh') || undefined });
    crm.toLogin();
  });

  function say(el, text, ok) {
    el.textContent = text;
    el.className = 'status ' + (ok ? 'ok' : 'bad');
  }

  // ── API key ──────────────────────────────────────────────────────────────
  const keyField = $('api-key');
  async function loadKey() {
    const res = await crm.api('GET', '/api/v1/settings/api-key');
    if (!res.ok) return say($('key-status'), crm.errorText(res), false);
    keyField.value = res.body.hasKey ? res.body.keyMask : '';
    keyField.placeholder = res.body.hasKey ? '' : 'No key yet: generate one';
    $('key-note').textContent = res.body.hasKey
      ? 'Created ' + new Date(res.body.createdAt).toLocaleString() + '. Only the last four characters are shown.'
      : '';
  }
  $('copy-key').addEventListener('click', async () => {
    if (!keyField.value) return say($('key-status'), 'There is no key to copy yet.', false);
    try {
      await navigator.clipboard.writeText(keyField.value);
    } catch {
      keyField.select();
      document.execCommand('copy');
    }
    say(
      $('key-status'),
      keyField.value.includes('••••') ? 'Copied the masked key. Generate a new key to see a full one.' : 'Copied to the clipboard.',
      true,
    );
  });
  $('generate-key').addEventListener('click', async () => {
    const had = keyField.value !== '';
    if (had && !confirm('Generate a new API key? The current key stops working immediately, for every integration that uses it.')) return;
    const res = await crm.api('POST', '/api/v1/settings/api-key/generate');
    if (!res.ok) return say($('key-status'), crm.errorText(res), false);
    keyField.value = res.body.apiKey;
    $('key-note').textContent = 'This is the only time the full key is shown: copy it now.';
    say($('key-status'), had ? 'New key generated; the old key no longer works.' : 'Key generated.', true);
    keyField.focus();
    keyField.select();
  });

  // ── Webhook ──────────────────────────────────────────────────────────────
  let webhooks = [];
  const select = $('webhook-existing');
  function renderEvents(names) {
    $('webhook-events').innerHTML = '';
    for (const name of names) {
      const label = document.createElement('label');
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.name = 'events';
      box.value = name;
      label.append(box, ' ', name);
      $('webhook-events').append(label);
    }
  }
  function fillForm(w) {
    $('webhook-url').value = w ? w.url : '';
    $('webhook-secret').value = '';
    $('webhook-secret').placeholder = w ? 'Leave empty to keep the current secret' : 'Leave empty to generate one (whsec_…)';
    for (const box of document.querySelectorAll('input[name=events]')) box.checked = w ? w.events.includes(box.value) : true;
    $('webhook-test').disabled = !w;
  }
  async function loadWebhooks(selectId) {
    const res = await crm.api('GET', '/api/v1/webhook-settings');
    if (!res.ok) return say($('webhook-status'), crm.errorText(res), false);
    webhooks = res.body;
    select.innerHTML = '<option value="">New webhook</option>';
    for (const w of webhooks) {
      const opt = document.createElement('option');
      opt.value = w.id;
      opt.textContent = w.url + (w.active ? '' : ' (disabled)');
      select.append(opt);
    }
    const chosen = webhooks.find((w) => w.id === selectId) || webhooks[0];
    select.value = chosen ? chosen.id : '';
    fillForm(chosen);
  }
  select.addEventListener('change', () => fillForm(webhooks.find((w) => w.id === select.value)));
  $('webhook-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const events = [...document.querySelectorAll('input[name=events]:checked')].map((b) => b.value);
    const body = { url: $('webhook-url').value.trim(), events };
    const secret = $('webhook-secret').value.trim();
    if (secret) body.secret = secret;
    const id = select.value;
    const res = id ? await crm.api('PUT', '/api/v1/webhook-settings/' + id, body) : await crm.api('POST', '/api/v1/webhook-settings', body);
    if (!res.ok) return say($('webhook-status'), crm.errorText(res), false);
    await loadWebhooks(res.body.id);
    say($('webhook-status'), res.body.secret ? 'Saved. Signing secret (shown once, copy it now): ' + res.body.secret : 'Saved.', true);
  });
  $('webhook-test').addEventListener('click', async () => {
    const id = select.value;
    if (!id) return;
    say($('webhook-status'), 'Sending a test event…', true);
    const res = await crm.api('POST', '/api/v1/webhook-settings/' + id + '/test');
    if (!res.ok) return say($('webhook-status'), crm.errorText(res), false);
    const t = res.body;
    say(
      $('webhook-status'),
      t.ok
        ? 'Test event delivered: HTTP ' + t.statusCode + ' in ' + t.durationMs + ' ms.'
        : 'Test event failed: ' + (t.error || 'HTTP ' + t.statusCode) + '.',
      t.ok,
    );
  });

  // ── AI assistant summary ────────────────────────────────────────────────
  async function loadAi() {
    const res = await crm.api('GET', '/api/v1/ai/config');
    if (!res.ok) {
      $('ai-status').textContent = 'Unavailable: ' + crm.errorText(res);
      return;
    }
    const c = res.body;
    $('ai-provider').textContent = c.provider === 'local' ? 'Built-in (offline)' : c.provider;
    $('ai-model').textContent = c.effectiveModel || c.model || 'default';
    $('ai-quota').textContent = c.dailyQuota + ' calls per day (' + c.usedToday + ' used today)';
    $('ai-status').textContent = c.status + (c.statusMessage ? ': ' + c.statusMessage : '');
  }

  // ── API documentation (from the same source as /api/public/openapi.json) ──
  async function loadDocs() {
    const res = await fetch('/api/public/openapi.json');
    const doc = await res.json();
    const list = $('docs-endpoints');
    list.innerHTML = '';
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const li = document.createElement('li');
        const m = document.createElement('span');
        m.className = 'method';
        m.textContent = method.toUpperCase();
        const code = document.createElement('code');
        code.textContent = path;
        li.append(m, ' ', code, ' — ', op.summary);
        list.append(li);
      }
    }
    const events = Object.keys(doc.webhooks);
    $('docs-events').innerHTML = '';
    for (const name of events) {
      const li = document.createElement('li');
      const code = document.createElement('code');
      code.textContent = name;
      li.append(code, ' — ', doc.webhooks[name].post.summary);
      $('docs-events').append(li);
    }
    renderEvents(events);
  }

  loadDocs().then(() => loadWebhooks());
  loadKey();
  loadAi();
})();
