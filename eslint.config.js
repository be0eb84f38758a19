// Lint rules are errors, never warnings: `npm run lint` allows zero warnings.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const domainDirs = ['operator/api/**', 'operator/index/**', 'operator/reconcile/**'];

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
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
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
    ignores: ['operator/api/generate-crds.ts'],
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
              message: 'operator/{api,index,reconcile} is the pure core: do I/O in operator/controller.',
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
    files: ['*.js', '*.config.ts', 'scripts/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
