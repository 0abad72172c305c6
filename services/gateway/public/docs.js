// The interactive reference of /openapi.json. validatorUrl: null keeps Swagger UI from asking an outside
// validator for a badge: the page loads nothing from another host (its CSP would refuse it anyway).
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
