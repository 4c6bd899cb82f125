/**
 * @module start-lines — what a started server says once it serves: where the public API listens
 * and where its data is, whether the trading page and the operator console are built (and how to
 * sign in to the console). docs/operations.md, "Logs".
 */
import type { Log } from '../domain/log.ts';

export interface Serving {
  /** The parts' logs by component (`http`, `admin`). */
  readonly at: (component: 'http' | 'admin') => Log;
  readonly http: { readonly host: string; readonly port: number };
  /** The public endpoint as listen.json records it (a log field). */
  readonly publicAt: object;
  /** The admin endpoint as listen.json records it: a URL unless on a Unix socket (where no browser goes). */
  readonly adminAt: object;
  readonly dataDir: string;
  readonly built: { readonly page: boolean; readonly console: boolean };
  readonly tokenFile: string;
}

export function logServing(serving: Serving): void {
  const s = {
    ...serving,
    httpLog: serving.at('http'),
    adminLog: serving.at('admin'),
    adminUrl: 'url' in serving.adminAt ? String(serving.adminAt.url) : undefined,
  };
  const base = `http://${s.http.host}:${s.http.port}`;
  s.httpLog.info({ public: s.publicAt, dataDir: s.dataDir }, `listening on ${base} (data in ${s.dataDir})`);
  s.httpLog.info(
    { built: s.built.page },
    s.built.page ? `trading page: ${base}/` : `trading page: not built (run npm run build:web)`,
  );
  if (s.adminUrl === undefined) return;
  s.adminLog.info(
    { built: s.built.console },
    s.built.console
      ? `operator console: ${s.adminUrl}/admin (sign in with the token in ${s.tokenFile})`
      : 'operator console: not built (run npm run build:web)',
  );
}
