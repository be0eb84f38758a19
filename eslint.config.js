// Lint rules are errors, never warnings: `npm run lint` allows zero warnings.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';

// The pure core, plus the pure rules that live beside their shells: the deletion's classification and the
// error policy.
const domainDirs = [
  'operator/api/**',
  'operator/exclusivity/**',
  'operator/ledger-walk/**',
  'operator/controller/deletion/steps.ts',
  'operator/runtime/error-policy.ts',
];

// What a pure module may import only as types: Kubernetes clients, the logger, the filesystem, processes, HTTP.
const IO_MODULES = [
  '@kubernetes/client-node',
  'pino',
  'node:fs',
  'node:fs/*',
  'node:child_process',
  'node:http',
];

// The homes of operator/ and what each may not import (CONTRIBUTING.md, "Where things live"). The layers,
// bottom up: api; exclusivity; ledger-walk; kube; runtime; then controller, sidecar, client; cli wires them together.
const HOMES = [
  'api',
  'exclusivity',
  'ledger-walk',
  'kube',
  'runtime',
  'controller',
  'sidecar',
  'client',
  'cli',
];
const others = (...allowed) =>
  HOMES.filter((home) => !allowed.includes(home)).map((home) => `operator/${home}`);
const boundaries = [
  {
    target: 'operator/api',
    from: others('api'),
    message: 'operator/api is the vocabulary: it imports nothing of ours.',
  },
  {
    target: 'operator/exclusivity',
    from: others('api', 'exclusivity'),
    message: 'operator/exclusivity is pure: api only.',
  },
  {
    target: 'operator/ledger-walk',
    from: others('api', 'exclusivity', 'ledger-walk'),
    message:
      'operator/ledger-walk is the walk: api and exclusivity only; the controller calls it, never the reverse.',
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
    from: others('api', 'exclusivity', 'ledger-walk', 'kube', 'runtime', 'controller', 'sidecar', 'client'),
    message: 'operator/controller holds the Sandbox rules: no entry points, client or local cluster.',
  },
  {
    // The binding of a SandboxClaim is an attach made by the operator: it derives the reference's name and
    // judges a 409 and the fence exactly as the client does, from the client's own pure modules.
    target: 'operator/controller',
    from: 'operator/client',
    except: ['./names.ts', './reattach.ts', './fence.ts'],
    message:
      'Of the client, the controller uses only its pure names, re-attach and fence judgements (the binding).',
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
    from: others('api', 'exclusivity', 'kube', 'client'),
    message: 'operator/client is a library for platforms: api, exclusivity and kube only.',
  },
  {
    target: 'operator/sidecar',
    from: others('api', 'exclusivity', 'kube', 'runtime', 'sidecar'),
    message: 'operator/sidecar runs in the pod: no controller, legacy walk or client.',
  },
  {
    target: 'operator/cli/plugin',
    from: others('api', 'exclusivity', 'kube', 'cli'),
    message: 'The kubectl plugin reads through kube and api, never controller internals.',
  },
  {
    target: 'operator',
    from: 'tools',
    message: 'The product never imports tools/: neither the image nor the package carries them.',
  },
  {
    target: 'tools',
    from: 'operator',
    message: 'tools/ run the product (a process, a file path), never import it.',
  },
];

// operator/controller's own layers, bottom up (CONTRIBUTING.md, "operator/controller"): cache/; the rules both
// turns share (the root's files); walk-lane/; the two turns, deletion/ and live/, apart; sandbox-reconciler.ts,
// which dispatches between them; adapters/, the ports' Kubernetes side; wiring/, which assembles it all. Each
// lists what it may import of the controller; anything else of it is a back-edge. (`except` globs match
// absolute paths, hence the leading **/.)
const CONTROLLER = 'operator/controller';
const may = (...parts) => parts.map((part) => `**/${CONTROLLER}/${part}`);
const SHARED_RULES = '!(sandbox-reconciler).ts';
const layer = (target, allowed, message) => ({
  target: `${CONTROLLER}/${target}`,
  from: `${CONTROLLER}/**`,
  except: may(...allowed),
  message,
});
const controllerLayers = [
  layer(
    'cache/**',
    ['cache/**'],
    'controller/cache is the bottom layer: it imports nothing else of the controller.',
  ),
  layer(SHARED_RULES, [SHARED_RULES, 'cache/**'], 'The shared rules import only each other and cache/.'),
  layer('walk-lane/**', ['walk-lane/**', SHARED_RULES, 'cache/**'], 'walk-lane/ sits below the turns.'),
  layer(
    'deletion/**',
    ['deletion/**', 'walk-lane/**', SHARED_RULES, 'cache/**'],
    'The deletion turn imports the shared rules, walk-lane/ and cache/, never the live turn.',
  ),
  layer(
    'live/**',
    ['live/**', 'walk-lane/**', SHARED_RULES, 'cache/**'],
    'The live turn imports the shared rules, walk-lane/ and cache/, never the deletion turn.',
  ),
  layer(
    'sandbox-reconciler.ts',
    ['deletion/**', 'live/**', 'walk-lane/**', SHARED_RULES, 'cache/**'],
    'The dispatcher sits above the turns, below adapters/ and wiring/.',
  ),
  layer(
    'binding/**',
    ['binding/**', SHARED_RULES, 'cache/**'],
    'binding/ (the SandboxClaim reconciler) imports the shared rules and cache/, never a Sandbox turn.',
  ),
  layer(
    'warm-pool/**',
    ['warm-pool/**', SHARED_RULES, 'cache/**'],
    "The warm pools' turn imports the shared rules and cache/, never a Sandbox turn.",
  ),
  layer(
    'adapters/**',
    ['adapters/**', 'warm-pool/ports.ts', SHARED_RULES, 'cache/**'],
    'adapters/ implement ports.ts (and warm-pool/ports.ts): the shared rules and cache/ only, never a turn.',
  ),
];

export default tseslint.config(
  // examples/agent-host imports the client package by name (@sandbox-operator/client):
  // test/integration/packaging/client-package.test.ts type-checks it against the installed tarball's own .d.ts.
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      // The client package's build output (clients/typescript: operator/client compiled).
      'clients/typescript/dist/**',
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
    files: ['operator/**/*.ts', 'tools/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts'],
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts'] })],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: [...boundaries, ...controllerLayers] }],
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
    ignores: ['operator/api/generate-crds.ts', 'operator/ledger-walk/adapters/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: IO_MODULES,
              allowTypeImports: true,
              message:
                'This is the pure core (operator/{api,exclusivity,ledger-walk}, the deletion steps, the error policy): do I/O in the shells.',
            },
          ],
        },
      ],
    },
  },
  // The sidecar's homes, and the folders of its process by role: sidecarHomes() at the end of this file.
  ...sidecarHomes(),
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

// The sidecar's homes by audience (docs/sidecar.md "Layout"): contract is what the others share; host (the
// agent host's side), injection (what the operator adds to pods) and process (the sidecar) each import the
// contract, never each other. Inside process, its folders by role, each with its level: a folder imports
// only folders of a lower level, and nothing imports the orchestration at process/'s root (reaper,
// registration, shell monitor, endpoint, app). Pure homes and folders import no Kubernetes client, logger,
// filesystem or HTTP values. A function declaration, so the sidecar's rules sit together here at the end.
function sidecarHomes() {
  const processFolders = [
    ['turns', 0, true],
    ['os', 0, false],
    ['ledger', 1, true],
    ['notices', 2, true],
    ['kube', 2, false],
    ['retire', 3, true],
  ];
  const processLayers = processFolders.map(([folder, level]) => {
    const below = processFolders.filter(([, other]) => other < level).map(([other]) => other);
    return {
      target: `operator/sidecar/process/${folder}`,
      from: 'operator/sidecar/process',
      except: [folder, ...below].map((allowed) => `./${allowed}`),
      message: `operator/sidecar/process/${folder} imports only ${below.length === 0 ? 'outside operator/sidecar/process' : below.join(', ')}: never a folder above it nor the orchestration.`,
    };
  });
  const homes = [
    ['contract', ['host', 'injection', 'process'], 'I/O belongs in operator/sidecar/process'],
    ['host', ['injection', 'process']],
    ['injection', ['host', 'process'], 'I/O belongs in operator/sidecar/process'],
    ['process', ['host', 'injection']],
    // After process/**, so their options replace its own for their files.
    ...processFolders
      .filter(([, , pure]) => pure)
      .map(([folder]) => [
        `process/${folder}`,
        ['host', 'injection'],
        'I/O belongs in process/os and process/kube (the adapters) or the orchestration at process/',
      ]),
  ];
  return [
    ...homes.map(([home, others, pure]) => ({
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
              ...(pure === undefined
                ? []
                : [
                    {
                      group: IO_MODULES,
                      allowTypeImports: true,
                      message: `operator/sidecar/${home} is pure: ${pure}.`,
                    },
                  ]),
            ],
          },
        ],
      },
    })),
    {
      // This rule's options replace the homes' boundaries above for these files: both go in.
      files: ['operator/sidecar/process/**/*.ts'],
      rules: {
        'import-x/no-restricted-paths': ['error', { zones: [...boundaries, ...processLayers] }],
      },
    },
  ];
}
