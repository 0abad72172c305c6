// The inbox settings page: the org's agent visibility and each chat-network account's auto-assignment.
// Names, account labels and error messages come from the API and are written with textContent only, so a
// user called "<img onerror=…>" stays text. The role only decides what is enabled; the API still checks it.
(function () {
  if (!crm.auth.token) return crm.toLogin();
  const $ = (id) => document.getElementById(id);
  const user = crm.auth.user();
  const role = user ? user.role : '';
  $('who').textContent = user ? user.fullName + ' (' + role + ')' : '';
  $('logout').addEventListener('click', async () => {
    await crm.api('POST', '/api/v1/auth/logout', { refreshToken: sessionStorage.getItem('crm.refresh') || undefined });
    crm.toLogin();
  });

  // Who may change what (README "Roles"): visibility is `settings:edit`, assignment is team_lead and up.
  const mayEditVisibility = role === 'owner' || role === 'admin';
  const mayEditAssignment = mayEditVisibility || role === 'team_lead';

  function say(el, text, ok) {
    el.textContent = text;
    el.className = 'status ' + (ok ? 'ok' : 'bad');
  }
  // The API's message plus the fields it names, so "Validation failed" also says what to fix.
  function errorText(res) {
    const details = res.body && res.body.error && res.body.error.details;
    const fields = Array.isArray(details) ? details.map((d) => d.field + ' ' + d.message).join('; ') : '';
    return crm.errorText(res) + (fields ? ' (' + fields + ')' : '');
  }
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    Object.assign(node, props || {});
    node.append(...children);
    return node;
  }

  // ── Visibility ──────────────────────────────────────────────────────────
  const visForm = $('visibility-form');
  if (!mayEditVisibility) {
    for (const input of visForm.querySelectorAll('input, button')) input.disabled = true;
    $('vis-note').textContent = 'Only admins and owners can change who sees which conversations.';
    $('vis-note').hidden = false;
  }
  async function loadVisibility() {
    const res = await crm.api('GET', '/api/v1/settings/inbox');
    if (!res.ok) return say($('vis-status'), errorText(res), false);
    visForm.agentVisibility.value = res.body.agentVisibility;
  }
  visForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const res = await crm.api('PUT', '/api/v1/settings/inbox', { agentVisibility: visForm.agentVisibility.value });
    if (!res.ok) return say($('vis-status'), errorText(res), false);
    visForm.agentVisibility.value = res.body.agentVisibility;
    say($('vis-status'), 'Saved.', true);
  });

  // ── Assignment per account ──────────────────────────────────────────────
  if (!mayEditAssignment) {
    $('asg-note').textContent = 'Only team leads, admins and owners can change assignment.';
    $('asg-note').hidden = false;
  }

  // Every active user of the org, all pages of the list (100 at most per page).
  async function activeUsers() {
    const all = [];
    for (let page = 1; ; page++) {
      const res = await crm.api('GET', '/api/v1/users?status=active&limit=100&page=' + page);
      if (!res.ok) throw new Error(errorText(res));
      all.push(...res.body.data);
      if (page >= res.body.pagination.pages) return all;
    }
  }

  function accountForm(account, assignment, users) {
    const key = account.id;
    const title = el('h3', { textContent: account.displayName + (account.phone ? ' — ' + account.phone : '') });
    const mode = el('select', { id: 'mode-' + key, name: 'mode' },
      el('option', { value: 'manual', textContent: 'Manual' }),
      el('option', { value: 'round_robin', textContent: 'Round robin' }));
    mode.value = assignment.mode;
    const checks = el('div', { className: 'checks' });
    for (const u of users) {
      const box = el('input', { type: 'checkbox', name: 'userIds', value: u.id, checked: assignment.userIds.includes(u.id) });
      checks.append(el('label', { title: u.email }, box, ' ', u.fullName));
    }
    if (!users.length) checks.append(el('p', { className: 'hint', textContent: 'No active users.' }));
    // A listed user who has since been deactivated cannot be saved again (the API refuses inactive users).
    const gone = assignment.userIds.filter((id) => !users.some((u) => u.id === id)).length;
    const goneNote = el('p', { className: 'hint', hidden: gone === 0, textContent: gone + ' listed user(s) no longer active: removed from the list when you save.' });
    const max = el('input', { id: 'max-' + key, name: 'maxOpenPerUser', type: 'text', inputMode: 'numeric', placeholder: 'No cap' });
    max.value = assignment.maxOpenPerUser == null ? '' : String(assignment.maxOpenPerUser);
    const status = el('p', { className: 'status' });
    status.setAttribute('role', 'status');
    status.setAttribute('aria-live', 'polite');
    const form = el('form', { className: 'provider account', noValidate: true },
      title,
      el('label', { htmlFor: mode.id, textContent: 'Mode' }), mode,
      el('fieldset', {}, el('legend', { textContent: 'Listed users' }), checks, goneNote),
      el('label', { htmlFor: max.id, textContent: 'Max open per user' }), max,
      el('p', { className: 'hint', textContent: 'Empty: no cap. Otherwise a whole number from 1 to 10000.' }),
      el('button', { type: 'submit', className: 'primary', textContent: 'Save' }),
      status);
    form.dataset.accountId = account.id;
    if (!mayEditAssignment) for (const c of form.querySelectorAll('input, select, button')) c.disabled = true;

    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const typed = max.value.trim();
      // Digits become a number; anything else goes as typed so the API names the field and the rule.
      const cap = typed === '' ? null : /^\d+$/.test(typed) ? Number(typed) : typed;
      const userIds = [...checks.querySelectorAll('input[name=userIds]:checked')].map((b) => b.value);
      const res = await crm.api('PUT', '/api/v1/chatnet-accounts/' + encodeURIComponent(account.id) + '/assignment', { mode: mode.value, userIds, maxOpenPerUser: cap });
      if (!res.ok) return say(status, errorText(res), false);
      mode.value = res.body.mode;
      max.value = res.body.maxOpenPerUser == null ? '' : String(res.body.maxOpenPerUser);
      goneNote.hidden = true;
      say(status, 'Saved.', true);
    });
    return form;
  }

  async function loadAccounts() {
    const box = $('accounts');
    const res = await crm.api('GET', '/api/v1/chatnet-accounts');
    if (!res.ok) return say($('asg-status'), errorText(res), false);
    if (!res.body.length) {
      box.replaceChildren(el('p', { className: 'hint', textContent: 'No chat-network accounts yet.' }));
      return;
    }
    let users;
    try {
      users = await activeUsers();
    } catch (e) {
      return say($('asg-status'), e.message, false);
    }
    const forms = [];
    for (const account of res.body) {
      const a = await crm.api('GET', '/api/v1/chatnet-accounts/' + encodeURIComponent(account.id) + '/assignment');
      if (!a.ok) {
        forms.push(el('div', { className: 'provider' }, el('h3', { textContent: account.displayName }), el('p', { className: 'status bad', textContent: errorText(a) })));
        continue;
      }
      forms.push(accountForm(account, a.body, users));
    }
    box.replaceChildren(...forms);
  }

  loadVisibility();
  loadAccounts();
})();
