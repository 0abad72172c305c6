'use strict';
// This repository's own ESLint rules, used as the `local` plugin in eslint.config.mjs.
module.exports = {
  meta: { name: 'local' },
  rules: {
    'module-boundaries': require('./rules/module-boundaries.cjs'),
  },
};
