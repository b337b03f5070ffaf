// @ts-check
import eslint from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const KAFKAJS = {
  name: 'kafkajs',
  message: 'kafkajs is imported only under src/sink/kafka/ and src/consumer/.',
};
/** kafkajs's producer keeps a function it finds when it loads: src/sink/kafka/kafkajs.ts replaces it first. */
const KAFKAJS_VALUES = {
  name: 'kafkajs',
  allowTypeImports: true,
  message: "take kafkajs's values from src/sink/kafka/kafkajs.ts, which patches kafkajs before it loads.",
};
const PG_LOGICAL = {
  name: 'pg-logical-replication',
  message: 'pg-logical-replication is imported only under src/source/wal/.',
};
/** @param {string[]} files @param {{name: string, message: string}[]} paths */
function restrictImports(files, paths) {
  return { files, rules: { 'no-restricted-imports': ['error', { paths }] } };
}

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'build/', 'build-*/', '.cache/', '.stack/', 'tools/'] },
  eslint.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.strictTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      'no-restricted-syntax': ['error', { selector: 'TSEnumDeclaration', message: 'Use a string union.' }],
    },
  },
  // Where each I/O library may be imported (CONVENTIONS §9.1). Later blocks override earlier ones.
  restrictImports(['src/**/*.ts'], [KAFKAJS, PG_LOGICAL]),
  restrictImports(['src/sink/kafka/**/*.ts', 'src/consumer/**/*.ts'], [KAFKAJS_VALUES, PG_LOGICAL]),
  restrictImports(['src/sink/kafka/kafkajs.ts'], [PG_LOGICAL]),
  restrictImports(['src/source/wal/**/*.ts'], [KAFKAJS]),
  {
    // core/ is pure: no I/O libraries, no process.env.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['pg', 'pg-*', 'kafkajs', 'pino', 'prom-client', 'yargs', 'node:*'],
              message: 'core/ is pure.',
            },
            { group: ['../source/*/**', '../sink/*/**'], message: 'core/ may only import the ports.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process'],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // node:test's describe/it return promises the runner awaits itself.
      '@typescript-eslint/no-floating-promises': 'off',
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
);
