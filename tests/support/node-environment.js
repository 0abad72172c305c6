// jest's node environment, plus Node's own `require` for the whole-stack tests (tests/support/native.ts).
// jest gives every test file its own module registry: a file that starts the stack loads the services' ~2,100 modules
// again (~2 s of CPU each time, ~200 such files a run). Loaded through Node's require, the services' code is loaded
// once per jest worker and shared by the files that worker runs, as one process shares it in production; each file
// still starts its own services, with their own databases, exchange and Redis prefix.
const { TestEnvironment } = require('jest-environment-node');

class NodeEnvironmentWithNativeRequire extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.global.__nativeRequire = require;
  }
}

module.exports = NodeEnvironmentWithNativeRequire;
