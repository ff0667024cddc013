// The console's build: one page under /console/ (the server serves dist/ there, on its admin listener), its
// script and style as files of their own (the page's Content-Security-Policy allows no inline script or
// style), nothing loaded from outside. Preact's JSX through Vite's own transform (no Babel preset).
// The dev loop (`pnpm --filter @animal-store/console dev`, docs/console.md): Vite serves the sources at
// /console/ with hot reload, and passes the admin API's path on to a running admin listener (ADMIN_URL,
// by default the README's http://127.0.0.1:3001), so the page calls it as it does when the server serves it.
import { defineConfig } from 'vite';

const adminUrl = process.env.ADMIN_URL ?? 'http://127.0.0.1:3001';

export default defineConfig({
  base: '/console/',
  server: { host: '127.0.0.1', proxy: { '/admin/v1': { target: adminUrl } } },
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
