import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Layers may import only in one direction: web → services → events ← projections; all may use infra. */
const layerRules = (layer, forbidden) => ({
  files: [`${layer}/**/*.{ts,tsx}`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: forbidden.map((target) => ({
          group: [`#${target}/*`, `**/${target}/*`],
          message: `${layer}/ must not import ${target}/ (see ARCHITECTURE.md).`,
        })),
      },
    ],
  },
});

export default tseslint.config(
  { ignores: ['node_modules', 'dist', 'data', 'test-results', 'playwright-report', 'tmp-scratch', '.data*'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node, ...globals.browser },
    },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/only-throw-error': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
    },
  },
  layerRules('infra', ['events', 'services', 'projections', 'web']),
  layerRules('events', ['services', 'projections', 'web']),
  layerRules('services', ['projections', 'web']),
  layerRules('projections', ['services', 'web']),
  {
    files: ['web/client/**/*.{ts,tsx}', 'web/components/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '#infra/*',
                '#services/*',
                '#projections/*',
                '#events/store/*',
                '#events/bus/*',
                '**/*.server',
                '**/*.server.*',
                'node:*',
              ],
              message: 'Browser code never imports server modules.',
            },
          ],
        },
      ],
    },
  },
  {
    // expect.any()/expect.stringContaining() are typed `any` by design.
    files: ['tests/**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
);
