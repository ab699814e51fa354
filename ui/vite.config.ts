import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

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
    include: ["src/**/*.test.{ts,tsx}"],
    setupFiles: ["src/test-setup.ts"],
  },
});
