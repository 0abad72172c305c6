(function () {
  const form = document.getElementById('login-form');
  const error = document.getElementById('login-error');
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    error.hidden = true;
    const res = await crm.api('POST', '/api/v1/auth/login', { email: form.email.value, password: form.password.value });
    if (!res.ok) {
      error.textContent = crm.errorText(res);
      error.hidden = false;
      form.password.focus();
      return;
    }
    crm.auth.save(res.body);
    const next = new URLSearchParams(location.search).get('next');
    location.href = crmRedirect.safeNextPath(next, location.origin, '/settings/dev/api');
  });
})();
