// The inbox settings page: the org's agent visibility, automatic messages (auto-close, out-of-hours reply, CSAT),
// each chat-network account's auto-assignment, business hours and SLA policies.
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
    showAutomation(res.body);
  }
  visForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const res = await crm.api('PUT', '/api/v1/settings/inbox', { agentVisibility: visForm.agentVisibility.value });
    if (!res.ok) return say($('vis-status'), errorText(res), false);
    visForm.agentVisibility.value = res.body.agentVisibility;
    say($('vis-status'), 'Saved.', true);
  });

  // ── Automatic messages: auto-close, out-of-hours reply, CSAT ───────────
  const autoForm = $('automation-form');
  if (!mayEditVisibility) {
    for (const c of autoForm.querySelectorAll('input, textarea, button')) c.disabled = true;
    $('auto-note').textContent = 'Only admins and owners can change automatic messages.';
    $('auto-note').hidden = false;
  }
  function showAutomation(s) {
    autoForm.autoCloseAfterMinutes.value = s.autoCloseAfterMinutes == null ? '' : String(s.autoCloseAfterMinutes);
    autoForm.autoCloseMessage.value = s.autoCloseMessage || '';
    autoForm.outOfHoursMessage.value = s.outOfHoursMessage || '';
    autoForm.csatEnabled.checked = s.csat.enabled;
    autoForm.csatMessage.value = s.csat.message;
  }
  autoForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const typed = autoForm.autoCloseAfterMinutes.value.trim();
    // Digits become a number; anything else goes as typed so the API names the field and the rule.
    const minutes = typed === '' ? null : /^\d+$/.test(typed) ? Number(typed) : typed;
    const text = (v) => (v.trim() ? v : null);
    const res = await crm.api('PUT', '/api/v1/settings/inbox', {
      autoCloseAfterMinutes: minutes,
      autoCloseMessage: text(autoForm.autoCloseMessage.value),
      outOfHoursMessage: text(autoForm.outOfHoursMessage.value),
      csat: { enabled: autoForm.csatEnabled.checked, message: autoForm.csatMessage.value },
    });
    if (!res.ok) return say($('auto-status'), errorText(res), false);
    showAutomation(res.body);
    say($('auto-status'), 'Saved.', true);
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
    const mode = el(
      'select',
      { id: 'mode-' + key, name: 'mode' },
      el('option', { value: 'manual', textContent: 'Manual' }),
      el('option', { value: 'round_robin', textContent: 'Round robin' }),
    );
    mode.value = assignment.mode;
    const checks = el('div', { className: 'checks' });
    for (const u of users) {
      const box = el('input', { type: 'checkbox', name: 'userIds', value: u.id, checked: assignment.userIds.includes(u.id) });
      checks.append(el('label', { title: u.email }, box, ' ', u.fullName));
    }
    if (!users.length) checks.append(el('p', { className: 'hint', textContent: 'No active users.' }));
    // A listed user who has since been deactivated cannot be saved again (the API refuses inactive users).
    const gone = assignment.userIds.filter((id) => !users.some((u) => u.id === id)).length;
    const goneNote = el('p', {
      className: 'hint',
      hidden: gone === 0,
      textContent: gone + ' listed user(s) no longer active: removed from the list when you save.',
    });
    const max = el('input', { id: 'max-' + key, name: 'maxOpenPerUser', type: 'text', inputMode: 'numeric', placeholder: 'No cap' });
    max.value = assignment.maxOpenPerUser == null ? '' : String(assignment.maxOpenPerUser);
    // Assignment that repairs itself (issue #29 item 5): sent with every save, since a PUT replaces all the settings.
    const onlyOnline = el('input', { id: 'online-' + key, name: 'onlyOnline', type: 'checkbox', checked: assignment.onlyOnline === true });
    const drain = el('input', { id: 'drain-' + key, name: 'drainBacklog', type: 'checkbox', checked: assignment.drainBacklog === true });
    const timeout = el('input', { id: 'timeout-' + key, name: 'replyTimeoutMinutes', type: 'text', inputMode: 'numeric', placeholder: 'No timeout' });
    timeout.value = assignment.replyTimeoutMinutes == null ? '' : String(assignment.replyTimeoutMinutes);
    const onTimeout = el(
      'select',
      { id: 'on-timeout-' + key, name: 'onTimeout' },
      el('option', { value: 'reassign', textContent: 'Reassign to the next user' }),
      el('option', { value: 'unassign', textContent: 'Unassign' }),
      el('option', { value: 'notify_leads', textContent: 'Notify the team leads' }),
    );
    onTimeout.value = assignment.onTimeout || 'reassign';
    const status = el('p', { className: 'status' });
    status.setAttribute('role', 'status');
    status.setAttribute('aria-live', 'polite');
    const form = el(
      'form',
      { className: 'provider account', noValidate: true },
      title,
      el('label', { htmlFor: mode.id, textContent: 'Mode' }),
      mode,
      el('fieldset', {}, el('legend', { textContent: 'Listed users' }), checks, goneNote),
      el('label', { htmlFor: max.id, textContent: 'Max open per user' }),
      max,
      el('p', { className: 'hint', textContent: 'Empty: no cap. Otherwise a whole number from 1 to 10000.' }),
      el('label', {}, onlyOnline, ' Assign only users who are online'),
      el('label', {}, drain, ' Hand the oldest unassigned conversation to a user who gets room'),
      el('label', { htmlFor: timeout.id, textContent: 'Reply timeout (minutes)' }),
      timeout,
      el('label', { htmlFor: onTimeout.id, textContent: 'When the assignee has not replied in time' }),
      onTimeout,
      el('p', { className: 'hint', textContent: 'Empty: no timeout. Otherwise a whole number from 1 to 10080.' }),
      el('button', { type: 'submit', className: 'primary', textContent: 'Save' }),
      status,
    );
    form.dataset.accountId = account.id;
    if (!mayEditAssignment) for (const c of form.querySelectorAll('input, select, button')) c.disabled = true;

    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const typed = max.value.trim();
      // Digits become a number; anything else goes as typed so the API names the field and the rule.
      const cap = typed === '' ? null : /^\d+$/.test(typed) ? Number(typed) : typed;
      const userIds = [...checks.querySelectorAll('input[name=userIds]:checked')].map((b) => b.value);
      const minutesTyped = timeout.value.trim();
      const minutes = minutesTyped === '' ? null : /^\d+$/.test(minutesTyped) ? Number(minutesTyped) : minutesTyped;
      const res = await crm.api('PUT', '/api/v1/chatnet-accounts/' + encodeURIComponent(account.id) + '/assignment', {
        mode: mode.value,
        userIds,
        maxOpenPerUser: cap,
        onlyOnline: onlyOnline.checked,
        drainBacklog: drain.checked,
        replyTimeoutMinutes: minutes,
        onTimeout: minutes === null ? null : onTimeout.value,
      });
      if (!res.ok) return say(status, errorText(res), false);
      mode.value = res.body.mode;
      max.value = res.body.maxOpenPerUser == null ? '' : String(res.body.maxOpenPerUser);
      timeout.value = res.body.replyTimeoutMinutes == null ? '' : String(res.body.replyTimeoutMinutes);
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
        forms.push(
          el(
            'div',
            { className: 'provider' },
            el('h3', { textContent: account.displayName }),
            el('p', { className: 'status bad', textContent: errorText(a) }),
          ),
        );
        continue;
      }
      forms.push(accountForm(account, a.body, users));
    }
    box.replaceChildren(...forms);
  }

  // ── Business hours ─────────────────────────────────────────────────────
  const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
  const hoursForm = $('hours-form');
  const dayInputs = DAY_NAMES.map((name, day) => {
    const input = el('input', { id: 'hours-day-' + day, name: 'day' + day, type: 'text', autocomplete: 'off', placeholder: 'Closed' });
    $('hours-days').append(el('label', { htmlFor: input.id, textContent: name }), input);
    return input;
  });
  if (!mayEditVisibility) {
    for (const c of hoursForm.querySelectorAll('input, button')) c.disabled = true;
    $('hours-note').textContent = 'Only admins and owners can change business hours.';
    $('hours-note').hidden = false;
  }
  function showHours(h) {
    hoursForm.timezone.value = h.timezone;
    dayInputs.forEach((input, day) => {
      input.value = h.days
        .filter((r) => r.day === day)
        .map((r) => r.open + '-' + r.close)
        .join(', ');
    });
    hoursForm.holidays.value = h.holidays.join(', ');
  }
  async function showOpenNow() {
    const res = await crm.api('GET', '/api/v1/settings/business-hours/status');
    if (!res.ok) return;
    const next = res.body.nextChangeAt ? ' until ' + new Date(res.body.nextChangeAt).toLocaleString() : '';
    $('hours-open').textContent = (res.body.open ? 'Open now' : 'Closed now') + next + '.';
  }
  async function loadHours() {
    const res = await crm.api('GET', '/api/v1/settings/business-hours');
    if (!res.ok) return say($('hours-status'), errorText(res), false);
    showHours(res.body);
    showOpenNow();
  }
  hoursForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const days = [];
    dayInputs.forEach((input, day) => {
      for (const part of input.value
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)) {
        const [open, close] = part.split('-').map((t) => t.trim());
        // Sent as typed: the API names the range that is wrong (days.N.open, days.N.close).
        days.push({ day, open: open || '', close: close || '' });
      }
    });
    const holidays = hoursForm.holidays.value
      .split(',')
      .map((d) => d.trim())
      .filter(Boolean);
    const res = await crm.api('PUT', '/api/v1/settings/business-hours', { timezone: hoursForm.timezone.value.trim(), days, holidays });
    if (!res.ok) return say($('hours-status'), errorText(res), false);
    showHours(res.body);
    showOpenNow();
    say($('hours-status'), 'Saved.', true);
  });

  // ── SLA policies ───────────────────────────────────────────────────────
  const slaForm = $('sla-form');
  if (!mayEditVisibility) {
    for (const c of slaForm.querySelectorAll('input, button')) c.disabled = true;
    $('sla-note').textContent = 'Only admins and owners can change SLA policies.';
    $('sla-note').hidden = false;
  }
  const minutesText = (m) => (m == null ? '—' : m + ' min');
  function policyItem(p) {
    const text =
      p.name +
      ': first reply ' +
      minutesText(p.firstResponseMinutes) +
      ', next reply ' +
      minutesText(p.nextResponseMinutes) +
      ', resolved ' +
      minutesText(p.resolutionMinutes) +
      (p.businessHoursOnly ? ' (business hours)' : '');
    const remove = el('button', { type: 'button', className: 'link', textContent: 'Delete', disabled: !mayEditVisibility });
    remove.setAttribute('aria-label', 'Delete ' + p.name);
    remove.addEventListener('click', async () => {
      const res = await crm.api('DELETE', '/api/v1/sla-policies/' + encodeURIComponent(p.id));
      if (!res.ok) return say($('sla-status'), errorText(res), false);
      say($('sla-status'), 'Deleted.', true);
      loadSla();
    });
    return el('li', { className: 'sla-policy' }, el('span', { textContent: text }), ' ', remove);
  }
  async function allPolicies() {
    const all = [];
    for (let page = 1; ; page++) {
      const res = await crm.api('GET', '/api/v1/sla-policies?limit=100&page=' + page);
      if (!res.ok) throw new Error(errorText(res));
      all.push(...res.body.data);
      if (page >= res.body.pagination.pages) return all;
    }
  }
  function accountSlaForm(account, policies, current) {
    const select = el(
      'select',
      { id: 'sla-account-' + account.id, name: 'policyId' },
      el('option', { value: '', textContent: 'No SLA' }),
      ...policies.map((p) => el('option', { value: p.id, textContent: p.name })),
    );
    select.value = current || '';
    const status = el('p', { className: 'status' });
    status.setAttribute('role', 'status');
    const form = el(
      'form',
      { className: 'provider account-sla', noValidate: true },
      el('label', { htmlFor: select.id, textContent: 'SLA of ' + account.displayName }),
      select,
      el('button', { type: 'submit', className: 'primary', textContent: 'Save', disabled: !mayEditVisibility }),
      status,
    );
    select.disabled = !mayEditVisibility;
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const res = await crm.api('PUT', '/api/v1/chatnet-accounts/' + encodeURIComponent(account.id) + '/sla', { policyId: select.value || null });
      if (!res.ok) return say(status, errorText(res), false);
      select.value = res.body.policyId || '';
      say(status, 'Saved.', true);
    });
    return form;
  }
  async function loadSla() {
    let policies;
    try {
      policies = await allPolicies();
    } catch (e) {
      return say($('sla-status'), e.message, false);
    }
    $('sla-list').replaceChildren(
      ...(policies.length ? policies.map(policyItem) : [el('li', { className: 'hint', textContent: 'No SLA policies yet.' })]),
    );
    const accounts = await crm.api('GET', '/api/v1/chatnet-accounts');
    if (!accounts.ok) return say($('sla-status'), errorText(accounts), false);
    const forms = [];
    for (const account of accounts.body) {
      const current = await crm.api('GET', '/api/v1/chatnet-accounts/' + encodeURIComponent(account.id) + '/sla');
      if (current.ok) forms.push(accountSlaForm(account, policies, current.body.policyId));
    }
    $('sla-accounts').replaceChildren(...forms);
  }
  slaForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    // Digits become numbers; anything else goes as typed so the API names the field.
    const num = (v) => (v.trim() === '' ? null : /^\d+$/.test(v.trim()) ? Number(v.trim()) : v.trim());
    const notify = [];
    if (slaForm.notifyAssignee.checked) notify.push('assignee');
    if (slaForm.notifyLeads.checked) notify.push('team_leads');
    const res = await crm.api('POST', '/api/v1/sla-policies', {
      name: $('sla-name').value,
      firstResponseMinutes: num(slaForm.firstResponseMinutes.value),
      nextResponseMinutes: num(slaForm.nextResponseMinutes.value),
      resolutionMinutes: num(slaForm.resolutionMinutes.value),
      businessHoursOnly: slaForm.businessHoursOnly.checked,
      onBreach: { notify, reassign: slaForm.reassign.checked },
    });
    if (!res.ok) return say($('sla-status'), errorText(res), false);
    slaForm.reset();
    say($('sla-status'), 'Created.', true);
    loadSla();
  });

  loadVisibility();
  loadAccounts();
  loadHours();
  loadSla();
})();
