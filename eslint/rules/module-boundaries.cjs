'use strict';
// A service's source folder is split into modules: each direct sub-folder of a root is one module, and
// its index.ts is the only door other modules may use. Files at the top of the root (app.ts, main.ts,
// deps.ts, config.ts…) wire the modules together and may import anything. Without this a module's
// internals (repos, workers, SQL helpers) leak into its neighbours, and a restructure breaks far-away files.
// CommonJS so that jest (which compiles tests to CommonJS) can load it for the RuleTester test.
const path = require('node:path');

/** `a/b/index.ts`, `a/b/index.js`, `a/b.ts` → without the extension, so every spelling compares equal. */
function withoutExtension(segments) {
  const last = segments[segments.length - 1];
  return [...segments.slice(0, -1), last.replace(/\.(?:[cm]?[jt]s)$/, '')];
}

/** The path of `file` inside `root` as segments, or null when it lies outside. */
function segmentsInside(root, file) {
  const rel = path.relative(root, file);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return null;
  return withoutExtension(rel.split(path.sep));
}

/** @type {import('eslint').Rule.RuleModule} */
module.exports = {
  meta: {
    type: 'problem',
    docs: { description: "A module imports another module of the same root only through that module's index" },
    schema: [
      {
        type: 'object',
        properties: {
          // Folders whose direct sub-folders are modules; relative paths are taken from ESLint's cwd.
          roots: { type: 'array', items: { type: 'string' }, minItems: 1 },
        },
        required: ['roots'],
        additionalProperties: false,
      },
    ],
    messages: {
      throughIndex:
        "Module '{{from}}' may use module '{{to}}' only through its index ('{{door}}'), not '{{source}}' (export what is needed from {{to}}/index.ts).",
    },
  },

  create(context) {
    const cwd = context.cwd;
    const roots = context.options[0].roots.map((r) => path.resolve(cwd, r));
    const file = path.resolve(cwd, context.filename);
    const root = roots.find((r) => segmentsInside(r, file) !== null);
    if (!root) return {};
    const own = segmentsInside(root, file);
    // A top-level file (app.ts, deps.ts…) is the composition root: it may reach into any module.
    if (own.length === 1) return {};
    const fromModule = own[0];

    function check(sourceNode) {
      if (!sourceNode || typeof sourceNode.value !== 'string') return;
      const source = sourceNode.value;
      if (!source.startsWith('.')) return; // packages and node built-ins are not modules of this root
      const target = segmentsInside(root, path.resolve(path.dirname(file), source));
      if (!target) return; // outside the root
      const [toModule, ...rest] = target;
      if (toModule === fromModule) return; // inside one's own module anything goes
      // `../B` is B's index (or a top-level file B.ts, which is not a module and is allowed); `../B/index` too.
      if (rest.length === 0 || (rest.length === 1 && rest[0] === 'index')) return;
      const door = path.relative(path.dirname(file), path.join(root, toModule)).split(path.sep).join('/');
      context.report({
        node: sourceNode,
        messageId: 'throughIndex',
        data: { from: fromModule, to: toModule, source, door: door.startsWith('.') ? door : `./${door}` },
      });
    }

    const isRequire = (node) => node.callee.type === 'Identifier' && node.callee.name === 'require' && node.arguments.length === 1;

    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node.source),
      CallExpression: (node) => isRequire(node) && node.arguments[0].type === 'Literal' && check(node.arguments[0]),
      // `import x = require('../b/c')` and the type `typeof import('../b/c')` (TypeScript only)
      TSExternalModuleReference: (node) => node.expression.type === 'Literal' && check(node.expression),
      TSImportType: (node) => check(node.source),
    };
  },
};
