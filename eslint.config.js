// Lint rules are errors, never warnings: `npm run lint` allows zero warnings.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';

// The pure core, plus the pure rules that live beside their shells: the deletion's classification and the
// error policy.
const domainDirs = [
  'operator/api/**',
  'operator/index/**',
  'operator/legacy/**',
  'operator/controller/deletion-steps.ts',
  'operator/runtime/error-policy.ts',
];

// The homes of operator/ and what each may not import (CONTRIBUTING.md, "Where things live"). The layers,
// bottom up: api; index; legacy; kube; runtime; then controller, sidecar, client; cli wires them together.
const HOMES = [
  'api',
  'index',
  'legacy',
  'kube',
  'runtime',
  'controller',
  'sidecar',
  'client',
  'cli',
  'local-cluster',
];
const others = (...allowed) =>
  HOMES.filter((home) => !allowed.includes(home)).map((home) => `operator/${home}`);
const boundaries = [
  {
    target: 'operator/api',
    from: others('api'),
    message: 'operator/api is the vocabulary: it imports nothing of ours.',
  },
  { target: 'operator/index', from: others('api', 'index'), message: 'operator/index is pure: api only.' },
  {
    target: 'operator/legacy',
    from: others('api', 'index', 'legacy'),
    message: 'operator/legacy is the walk: api and index only; the controller calls it, never the reverse.',
  },
  {
    target: 'operator/kube',
    from: others('kube'),
    message: 'operator/kube is shared plumbing: it imports nothing of ours.',
  },
  {
    target: 'operator/runtime',
    from: others('kube', 'runtime'),
    message: 'operator/runtime is generic: it knows nothing of Sandboxes (kube only).',
  },
  {
    target: 'operator/controller',
    from: others('api', 'index', 'legacy', 'kube', 'runtime', 'controller', 'sidecar'),
    message: 'operator/controller holds the Sandbox rules: no entry points, client or local cluster.',
  },
  {
    target: 'operator/controller',
    from: 'operator/sidecar',
    except: ['./injection'],
    message:
      'Of the sidecar, the controller uses only what it injects into pods (operator/sidecar/injection).',
  },
  {
    target: 'operator/client',
    from: others('api', 'index', 'kube', 'client'),
    message: 'operator/client is a library for platforms: api, index and kube only.',
  },
  {
    target: 'operator/sidecar',
    from: others('api', 'index', 'kube', 'runtime', 'sidecar'),
    message: 'operator/sidecar runs in the pod: no controller, legacy walk or client.',
  },
  {
    target: 'operator/cli/plugin',
    from: others('api', 'index', 'kube', 'cli'),
    message: 'The kubectl plugin reads through kube and api, never controller internals.',
  },
  {
    target: 'operator/local-cluster',
    from: others('local-cluster'),
    message: 'operator/local-cluster knows nothing of the product.',
  },
];

export default tseslint.config(
  // examples/agent-host imports the packed package by name: test/integration/packaging/client-package.test.ts
  // type-checks it against the installed tarball's own .d.ts.
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'charts/**',
      'coverage/**',
      '.stryker-tmp/**',
      'reports/**',
      'examples/agent-host/**',
      // The Python client's virtual environment (clients/python/venv.sh) holds packages' own JavaScript.
      'clients/python/.venv/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    // Crossed homes, type-only imports included. eslint-plugin-import-x: maintained, flat-config native,
    // resolves the path instead of matching strings. Circles are checked by `npm run deps:check`.
    files: ['operator/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts'],
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts'] })],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: boundaries }],
    },
  },
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'preserve-caught-error': 'error',
      'max-lines': ['error', { max: 300, skipBlankLines: true, skipComments: true }],
      eqeqeq: 'error',
      // Arrow shorthands returning void calls are idiomatic in event handlers and sinks.
      '@typescript-eslint/no-confusing-void-expression': 'off',
      // client-node's models are data classes it builds from plain JSON itself; plain objects are their normal use.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      '@typescript-eslint/no-misused-spread': 'off',
    },
  },
  {
    // The functional core: no Kubernetes client, logger, filesystem or process I/O.
    files: domainDirs,
    ignores: ['operator/api/generate-crds.ts', 'operator/legacy/adapters/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '@kubernetes/client-node',
                'pino',
                'node:fs',
                'node:fs/*',
                'node:child_process',
                'node:http',
              ],
              allowTypeImports: true,
              message:
                'This is the pure core (operator/{api,index,legacy}, the deletion steps, the error policy): do I/O in the shells.',
            },
          ],
        },
      ],
    },
  },
  // The sidecar's homes by audience (docs/sidecar.md "Layout"): contract is what the others share; host
  // (the agent host's side), injection (what the operator adds to pods) and process (the sidecar) each
  // import the contract, never each other.
  ...[
    ['contract', ['host', 'injection', 'process'], true],
    ['host', ['injection', 'process'], false],
    ['injection', ['host', 'process'], true],
    ['process', ['host', 'injection'], false],
  ].map(([home, others, pure]) => ({
    files: [`operator/sidecar/${home}/**`],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(\\.\\./)+(${others.join('|')})/`,
              message: `operator/sidecar/${home} may import operator/sidecar/contract, not ${others.join(', ')}.`,
            },
            ...(pure
              ? [
                  {
                    group: [
                      '@kubernetes/client-node',
                      'pino',
                      'node:fs',
                      'node:fs/*',
                      'node:child_process',
                      'node:http',
                    ],
                    allowTypeImports: true,
                    message: `operator/sidecar/${home} is pure: I/O belongs in operator/sidecar/process.`,
                  },
                ]
              : []),
          ],
        },
      ],
    },
  })),
  {
    files: ['test/**'],
    rules: {
      'max-lines': ['error', { max: 500, skipBlankLines: true, skipComments: true }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Asymmetric matchers (expect.stringContaining, …) are typed `any` by vitest.
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
  {
    files: ['*.js', '.dependency-cruiser.mjs', '*.config.ts', 'scripts/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
