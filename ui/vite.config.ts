import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

// Most test files share one jsdom per worker (vmThreads): building jsdom again for every file
// was most of vitest's time (68 s of CPU for the whole run, now 31). These two each put a replacement
// of the api module of their own (vi.mock over the original), and one after the other in a
// shared worker the second's components called the first's, so each runs in a fresh jsdom.
const ISOLATED = ["src/components/composer/composer.test.tsx", "src/components/views/views.test.tsx"];

// The window loads the built files from the app bundle, so `base` is relative and nothing is
// fetched from a server at run time.
export default defineConfig({
  plugins: [react()],
  base: "./",
  clearScreen: false,
  build: {
    outDir: "dist",
    target: "es2022",
    sourcemap: false,
    chunkSizeWarningLimit: 1500,
    // JavaScriptCore keeps a script's source as one byte per character only when all of it is
    // Latin-1; a single Chinese string would double the whole bundle's cost in the window.
    rolldownOptions: { output: { charset: "ascii" } },
  },
  server: { port: 1420, strictPort: true },
  test: {
    environment: "jsdom",
    setupFiles: ["src/test-setup.ts"],
    projects: [
      { extends: true, test: { name: "shared", include: ["src/**/*.test.{ts,tsx}"], exclude: ISOLATED, pool: "vmThreads" } },
      { extends: true, test: { name: "isolated", include: ISOLATED } },
    ],
  },
});
