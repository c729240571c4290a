// Flat config: typescript-eslint's recommended rules on top of ESLint's.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", ".venv/**", ".venv-lerobot/**", "bench/work/**", "data/*/**", "!data/lerobot/**", "runs/**", "learner/**", "bench/results/**", "dist/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", Buffer: "readonly", URL: "readonly", setTimeout: "readonly", clearTimeout: "readonly", setInterval: "readonly", clearInterval: "readonly", setImmediate: "readonly", performance: "readonly", structuredClone: "readonly", TextEncoder: "readonly", TextDecoder: "readonly" } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-console": "off",
    },
  },
  {
    // The operator page runs in the browser (plain scripts, no bundler).
    files: ["web/static/**/*.js"],
    languageOptions: { sourceType: "script", globals: { window: "readonly", document: "readonly", location: "readonly", WebSocket: "readonly", URLSearchParams: "readonly", DataView: "readonly" } },
  },
);
