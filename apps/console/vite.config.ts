// The console's build: one page under /console/ (the server serves dist/ there, on its admin listener), its
// script and style as files of their own (the page's Content-Security-Policy allows no inline script or
// style), nothing loaded from outside. Preact's JSX through Vite's own transform (no Babel preset).
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No module preload polyfill: it is an inline script, which the page's policy refuses.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: 'es2022',
  },
});
