// Vite builds the trading page and the operator console into web/dist, which the server serves
// (src/api/http/static-site.ts): the page (index.html, assets/) on the public listener, the console
// (admin/index.html, admin/assets/) on the admin listener only. Everything the console's entry
// brings goes under admin/, so the public listener can leave that folder out whole.
// `npm run web:dev` serves the page with hot reload and forwards the API to a server on 127.0.0.1:8080;
// the console (/admin/) too when the server's admin port is fixed the same way for both:
// `BOURSE_ADMIN_PORT=8081 npm start` and `BOURSE_ADMIN_PORT=8081 npm run web:dev`.
import { join } from 'node:path';
import { defineConfig } from 'vite';

const API = 'http://127.0.0.1:8080';
const ADMIN_PORT = process.env['BOURSE_ADMIN_PORT'];
const ADMIN = ADMIN_PORT === undefined ? undefined : `http://127.0.0.1:${ADMIN_PORT}`;
/** The console's entry chunk's name, and the folder its files go to. */
const CONSOLE = 'console';

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
    rollupOptions: {
      input: {
        index: join(import.meta.dirname, 'index.html'),
        [CONSOLE]: join(import.meta.dirname, 'admin', 'index.html'),
      },
      output: {
        entryFileNames: (chunk) =>
          chunk.name === CONSOLE ? 'admin/assets/[name]-[hash].js' : 'assets/[name]-[hash].js',
        assetFileNames: (asset) =>
          asset.names.some((n) => n.startsWith(CONSOLE))
            ? 'admin/assets/[name]-[hash][extname]'
            : 'assets/[name]-[hash][extname]',
      },
    },
  },
  server: {
    proxy: {
      '/api': API,
      '/data': API,
      '/websocket': { target: API, ws: true },
      // The admin API's routes (POST /admin/<route>) and probes; Vite itself serves /admin/.
      ...(ADMIN === undefined
        ? {}
        : {
            '^/admin/(?!$|index\\.html)': ADMIN,
            '/health': ADMIN,
            '/ready': ADMIN,
            '/metrics': ADMIN,
          }),
    },
  },
});
