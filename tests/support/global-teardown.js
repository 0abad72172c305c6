module.exports = () => require('@crm/testing/dist/global-setup').teardown();
