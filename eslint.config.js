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
