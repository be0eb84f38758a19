// Import circles, type-only imports included (`tsPreCompilationDeps`): a circle made of `import type` still
// ties two modules together. Folder boundaries live in eslint.config.js; this file checks circles only.
// dependency-cruiser rather than eslint-plugin-import-x's no-cycle, which skips type-only imports.
/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Break the circle: move the shared type or function to the module both import.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
  },
};
