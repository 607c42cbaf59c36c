import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import productionFolders from './production-folders.json' with { type: 'json' };

/** Folders whose code runs in production (production-folders.json). */
const PRODUCTION_FOLDERS = productionFolders.folders;

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      '.dev/',
      '.temporal/',
      'contracts/artifacts/',
      'test-output/',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Production modules never reach into the local stack's stand-ins or the tests (docs/architecture.md).
    files: PRODUCTION_FOLDERS.map((folder) => `${folder}/**/*.ts`),
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/dev', '**/dev/**', '**/test', '**/test/**'],
              message: 'Production code must not import dev/ (local stand-ins) or test/.',
            },
          ],
        },
      ],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
