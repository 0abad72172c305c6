// AI assistant configuration: provider, model, quota, and per-provider keys.
(function () {
  if (!crm.auth.token) return crm.toLogin();
  const $ = (id) => document.getElementById(id);
  const user = crm.auth.user();
  $('who').textContent = user ? user.fullName : '';
  const say = (el, text, ok) => {
    el.textContent = text;
    el.className = 'status ' + (ok ? 'ok' : 'bad');
  };

  async function loadModels(provider) {
    $('cfg-models').innerHTML = '';
    $('models-note').textContent = '';
    if (provider === 'local') return;
    const res = await crm.api('GET', '/api/v1/ai/providers/' + provider + '/models');
    if (!res.ok) return;
    for (const m of res.body.models) {
      const opt = document.createElement('option');
      opt.value = m.value;
      opt.label = m.title;
      $('cfg-models').append(opt);
    }
    $('models-note').textContent = res.body.error ? res.body.error + ' You can type a model name.' : res.body.models.length + ' models available.';
  }

  async function loadConfig() {
    const res = await crm.api('GET', '/api/v1/ai/config');
    if (!res.ok) return say($('cfg-status'), crm.errorText(res), false);
    const c = res.body;
    $('cfg-provider').value = c.provider;
    $('cfg-model').value = c.model;
    $('cfg-quota').value = c.dailyQuota;
    $('cfg-enabled').checked = c.enabled;
    say($('cfg-status'), 'Status: ' + c.status + (c.statusMessage ? ' — ' + c.statusMessage : ''), c.status === 'active' || c.status === 'local');
    loadModels(c.provider);
  }

  async function loadProviders() {
    const res = await crm.api('GET', '/api/v1/ai/providers');
    if (!res.ok) return say($('prov-status'), crm.errorText(res), false);
    const box = $('providers');
    box.innerHTML = '';
    for (const p of res.body) {
      if (!$('cfg-provider').querySelector('option[value="' + p.id + '"]')) {
        const opt = document.createElement('option');
        opt.value = p.id;
        opt.textContent = p.name;
        $('cfg-provider').append(opt);
      }
      const form = document.createElement('form');
      form.className = 'provider';
      form.innerHTML =
        '<h3></h3><label>API key <input type="password" name="apiKey" autocomplete="off"></label>' +
        '<label>Base URL <input type="url" name="baseUrl"></label><div class="row"><button type="submit">Save key</button>' +
        '<button type="button" name="remove">Remove key</button></div>';
      form.querySelector('h3').textContent = p.name + (p.hasKey ? ' — key ' + p.keyMask : ' — no key');
      form.apiKey.placeholder = p.hasKey ? 'Leave empty to keep ' + p.keyMask : 'Paste the provider API key';
      form.baseUrl.value = p.baseUrl;
      form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        const body = { baseUrl: form.baseUrl.value.trim() };
        if (form.apiKey.value) body.apiKey = form.apiKey.value;
        const r = await crm.api('PUT', '/api/v1/ai/providers/' + p.id, body);
        say($('prov-status'), r.ok ? p.name + ' saved.' : crm.errorText(r), r.ok);
        if (r.ok) loadProviders();
      });
      form.remove.addEventListener('click', async () => {
        const r = await crm.api('PUT', '/api/v1/ai/providers/' + p.id, { apiKey: '', baseUrl: form.baseUrl.value.trim() });
        say($('prov-status'), r.ok ? p.name + ' key removed.' : crm.errorText(r), r.ok);
        if (r.ok) loadProviders();
      });
      box.append(form);
    }
  }

  $('cfg-provider').addEventListener('change', () => loadModels($('cfg-provider').value));
  $('config-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const quota = Number($('cfg-quota').value);
    if (!Number.isInteger(quota) || quota < 1) return say($('cfg-status'), 'Daily quota must be a whole number of at least 1.', false);
    const res = await crm.api('PUT', '/api/v1/ai/config', {
      provider: $('cfg-provider').value,
      model: $('cfg-model').value.trim(),
      dailyQuota: quota,
      enabled: $('cfg-enabled').checked,
    });
    if (!res.ok) return say($('cfg-status'), crm.errorText(res), false);
    say($('cfg-status'), 'Saved. Status: ' + res.body.status + (res.body.statusMessage ? ' — ' + res.body.statusMessage : ''), true);
  });

  loadProviders().then(loadConfig);
})();
