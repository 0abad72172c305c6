// jest globalSetup/globalTeardown: real infrastructure from env, local defaults, or testcontainers.
module.exports = () => require('@crm/testing/dist/global-setup').setup();
