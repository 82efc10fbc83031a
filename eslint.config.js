import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * Layers import in one direction only (ARCHITECTURE.md): web → services → events ← projections; web also
 * reads projections; every layer may use infra; infra imports none of them; nothing imports tests.
 * `no-restricted-imports` takes gitignore-style `group` globs, where a leading `#` starts a comment, so
 * the rules below use `regex` against the import as written: the `#layer/…` alias and any relative
 * `../…/layer/…` path (no folder inside a layer is named after a layer, so `(../)+layer/` can only
 * climb out to that top-level layer). tests/unit/layer-rule.test.ts proves each kind fires.
 */
const layers = ['infra', 'events', 'services', 'projections', 'web', 'tests'];
const allowed = {
  infra: [],
  events: ['infra'],
  services: ['events', 'infra'],
  projections: ['events', 'infra'],
  web: ['services', 'events', 'projections', 'infra'],
};

/** A pattern that matches imports of `target` (a layer, or a path inside one) by alias or relative path. */
const importOf = (target, message) => ({
  regex: `^(#|(\\.\\./)+)(${target})(/|$)`,
  message,
});

const layerRule = (layer) => {
  const forbidden = layers.filter((other) => other !== layer && !allowed[layer].includes(other));
  return {
    files: [`${layer}/**/*.{ts,tsx}`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            importOf(
              forbidden.join('|'),
              `${layer}/ may import only ${allowed[layer].join(', ') || 'nothing from the other layers'} (see ARCHITECTURE.md).`,
            ),
          ],
        },
      ],
    },
  };
};

/** Browser code (bundled for the page) never imports server modules. Replaces web/'s rule for these files. */
const browserFiles = ['web/client/**/*.{ts,tsx}', 'web/components/**/*.{ts,tsx}'];
const browserMessage = 'Browser code never imports server modules (see ARCHITECTURE.md).';
const browserRule = {
  files: browserFiles,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          importOf('infra|services|projections|tests|events/store|events/bus', browserMessage),
          { regex: '\\.server(\\.[a-z]+)?$', message: browserMessage },
          { regex: '^node:', message: browserMessage },
        ],
      },
    ],
  },
};

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
  ...Object.keys(allowed).map(layerRule),
  browserRule,
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
