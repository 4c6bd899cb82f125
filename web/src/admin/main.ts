/**
 * @module main — the operator console, served at /admin on the admin listener: a client of the
 * admin API only (as the `bourse` CLI is). Sign-in with the admin token, kept in this tab's
 * sessionStorage; then the dashboard, users, markets and the audit log, one view at a time,
 * chosen by the address's hash (`#dashboard`, `#users`, `#user/<id>`, `#markets`, `#audit`).
 */
import './console.css';
import { AdminApi } from './api.ts';
import { auditView } from './audit-view.ts';
import { dashboardView } from './dashboard-view.ts';
import { h } from './dom.ts';
import { marketsView } from './markets-view.ts';
import { userView, usersView } from './users-view.ts';
import type { Console, View } from './view.ts';

/** Where the token is kept: this tab only, gone when it closes or on Sign out. */
const TOKEN_KEY = 'bourse.admin.token';

const VIEWS: readonly { readonly hash: string; readonly title: string; readonly view: View }[] = [
  { hash: 'dashboard', title: 'Dashboard', view: dashboardView },
  { hash: 'users', title: 'Users', view: usersView },
  { hash: 'markets', title: 'Markets', view: marketsView },
  { hash: 'audit', title: 'Audit log', view: auditView },
];

const app = document.getElementById('app') as HTMLElement;

function signInScreen(problem?: string): void {
  const input = h('input', {
    id: 'token',
    type: 'password',
    placeholder: 'admin token',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const result = h(
    'div',
    { id: 'sign-in-result', class: problem === undefined ? 'result' : 'result bad' },
    problem,
  );
  const form = h(
    'form',
    {
      id: 'sign-in',
      class: 'sign-in',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const token = input.value.trim();
        if (token === '') return;
        result.textContent = 'Checking…';
        result.className = 'result';
        new AdminApi(token)
          .call('/admin/venue')
          .then(() => {
            sessionStorage.setItem(TOKEN_KEY, token);
            start(token);
          })
          .catch((error: unknown) => {
            result.textContent = `Not signed in: ${error instanceof Error ? error.message : String(error)}`;
            result.className = 'result bad';
          });
      },
    },
    h('h1', {}, 'Bourse operator console'),
    h('label', { for: 'token' }, 'Admin token'),
    input,
    h('button', { type: 'submit' }, 'Sign in'),
    result,
    h(
      'p',
      { class: 'note' },
      'The admin token is in the file ',
      h('code', {}, 'admin.token'),
      " in the venue's data directory — the file the ",
      h('code', {}, 'bourse'),
      ' CLI reads (',
      h('code', {}, 'cat data/admin.token'),
      ' for the default one). It is kept in this browser tab only (sessionStorage, gone when the tab ',
      'closes or on Sign out) and sent with every call as the CLI sends it: ',
      h('code', {}, 'Authorization: Bearer …'),
      '.',
    ),
  );
  app.replaceChildren(form);
  input.focus();
}

function start(token: string): void {
  const main = h('main', { id: 'view' });
  const notice = h('div', { id: 'notice', class: 'notice', role: 'status', hidden: true });
  let noticeTimer: ReturnType<typeof setTimeout> | undefined;
  const signOut = (problem?: string): void => {
    sessionStorage.removeItem(TOKEN_KEY);
    ctx.stopped = true;
    if (location.hash !== '') history.replaceState(null, '', location.pathname);
    signInScreen(problem);
  };
  const ctx: Console = {
    api: new AdminApi(token, () =>
      signOut('The server refused the token (it may have restarted with another).'),
    ),
    stopped: false,
    notice: (message, good = false) => {
      notice.textContent = message;
      notice.className = `notice ${good ? 'ok' : 'bad'}`;
      notice.hidden = false;
      if (noticeTimer !== undefined) clearTimeout(noticeTimer);
      noticeTimer = setTimeout(() => (notice.hidden = true), 10_000);
    },
    go: (hash) => {
      location.hash = hash;
    },
  };
  const nav = h(
    'nav',
    { class: 'tabs' },
    ...VIEWS.map((v) => h('a', { href: `#${v.hash}`, 'data-view': v.hash }, v.title)),
  );
  app.replaceChildren(
    h(
      'header',
      { class: 'top' },
      h('div', { class: 'brand' }, 'Bourse ', h('span', { class: 'muted' }, 'operator')),
      nav,
      h('button', { id: 'sign-out', type: 'button', onclick: () => signOut() }, 'Sign out'),
    ),
    notice,
    main,
  );

  let shown = 0;
  const route = async (): Promise<void> => {
    if (ctx.stopped) return;
    const [name = 'dashboard', arg] = location.hash.slice(1).split('/');
    const entry = VIEWS.find((v) => v.hash === name);
    const view: View = name === 'user' ? userView : (entry?.view ?? dashboardView);
    for (const link of nav.querySelectorAll('a')) {
      link.classList.toggle(
        'active',
        link.dataset.view === (name === 'user' ? 'users' : (entry?.hash ?? 'dashboard')),
      );
    }
    const mine = ++shown;
    main.replaceChildren(h('p', { class: 'loading' }, 'Loading…'));
    try {
      const content = await view(
        ctx,
        arg === undefined ? undefined : decodeURIComponent(arg),
        () => mine === shown,
      );
      if (mine === shown && !ctx.stopped) main.replaceChildren(content);
    } catch (error) {
      if (mine !== shown || ctx.stopped) return;
      main.replaceChildren(
        h(
          'p',
          { class: 'result bad' },
          `Could not load: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
    }
  };
  window.onhashchange = () => void route();
  void route();
}

const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved === null) signInScreen();
else start(saved);
