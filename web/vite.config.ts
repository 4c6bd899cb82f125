// Vite builds the trading page into web/dist, which the server serves (src/api/http/static-site.ts).
// `npm run web:dev` serves it with hot reload and forwards the API to a server on 127.0.0.1:8080.
import { defineConfig } from 'vite';

const API = 'http://127.0.0.1:8080';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  publicDir: 'public',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline script: the page's Content-Security-Policy allows scripts from its own origin only.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 400,
    sourcemap: false,
  },
  server: {
    proxy: {
      '/api': API,
      '/data': API,
      '/websocket': { target: API, ws: true },
    },
  },
});
