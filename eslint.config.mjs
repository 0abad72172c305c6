// `npm run lint` runs this in every workspace after its tsc check: correctness rules only, no style.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';
import local from './eslint/plugin.cjs';

const here = path.dirname(fileURLToPath(import.meta.url)); // import.meta.dirname needs Node ≥ 20.11
/** Services whose direct sub-folders of src are modules, each used by the others only through its index.ts. */
const MODULAR_SERVICES = ['crm', 'messaging', 'automation', 'chatnet-connector'];

// Test files sit next to the code but outside their workspace's tsconfig (the build excludes them), so the
// type-aware rules cannot see them; they get the rules that need no types. tests/ has a tsconfig of its own.
const untypedTests = [
  'services/*/src/**/*.test.ts',
  'packages/*/src/**/*.test.ts',
  'packages/*/src/test-support/**',
  'services/*/src/test-support/**',
];

export default defineConfig(
  globalIgnores(['**/dist/**', '**/node_modules/**', '**/coverage/**', '.local/**', 'bench/**/out/**']),

  // Every TypeScript file: rules that need no type information.
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser, sourceType: 'module' },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: {
      // The code carries a few directives for rules of ESLint's recommended sets that this correctness-only
      // configuration leaves off (no-control-regex, no-require-imports, no-explicit-any outside the gRPC
      // boundary); they document deliberate code and would be reported as unused on every run.
      reportUnusedDisableDirectives: 'off',
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          // `catch (err) { return fallback }` is how the code says "any failure means X"; naming it costs nothing.
          caughtErrors: 'none',
          // `const { secret, ...rest } = row` is how a field is dropped from an object on purpose.
          ignoreRestSiblings: true,
        },
      ],
      '@typescript-eslint/no-unused-expressions': 'error',
    },
  },

  // Workspace sources and the whole-stack tests: type-aware rules, each file typed by its own tsconfig.
  {
    files: ['services/*/src/**/*.ts', 'packages/*/src/**/*.ts', 'tests/**/*.ts'],
    ignores: untypedTests,
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: here } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/require-await': 'off',
    },
  },

  // `any` is refused where data crosses a process boundary: gRPC handlers and clients.
  {
    files: ['services/*/src/grpc/**/*.ts', 'services/*/src/clients/**/*.ts', 'services/*/src/**/*.handler.ts', 'services/*/src/**/*.client.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'error' },
  },
  // The kit those handlers and clients share (its types are generated from the protos, see @crm/proto-types).
  {
    files: ['packages/grpc-kit/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'error' },
  },

  // The services built of modules (crm, messaging, automation, the connector): the folders directly under src meet only
  // through their index.ts (each service's README, "Modules"). tests/architecture/*-modules.test.ts check the same.
  {
    files: MODULAR_SERVICES.map((s) => `services/${s}/src/**/*.ts`),
    plugins: { local },
    rules: {
      'local/module-boundaries': ['error', { roots: MODULAR_SERVICES.map((s) => path.join(here, `services/${s}/src`)) }],
    },
  },
);
