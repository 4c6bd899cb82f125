/**
 * @module main — the operator console, served at /admin on the admin listener: a client of the
 * admin API only (as the `bourse` CLI is). An operator signs in with its token and, for the roles
 * that move money, a TOTP code (src/api/admin/operators.ts); the session is kept in this tab's
 * sessionStorage. Then the dashboard, users, activity, markets and the audit log, one view at a
 * time, chosen by the address's hash (`#dashboard`, `#users`, `#user/<id>`, `#activity`,
 * `#markets`, `#audit`).
 */
import './console.css';
import { activityView } from './activity-view.ts';
import { AdminApi, openSession, type Session } from './api.ts';
import { auditView } from './audit-view.ts';
import { dashboardView } from './dashboard-view.ts';
import { h } from './dom.ts';
import { marketsView } from './markets-view.ts';
import { userView, usersView } from './users-view.ts';
import type { Console, View } from './view.ts';

/** Where the session is kept: this tab only, gone when it closes or on Sign out. */
const SESSION_KEY = 'bourse.admin.session';

const VIEWS: readonly { readonly hash: string; readonly title: string; readonly view: View }[] = [
  { hash: 'dashboard', title: 'Dashboard', view: dashboardView },
  { hash: 'users', title: 'Users', view: usersView },
  { hash: 'activity', title: 'Activity', view: activityView },
  { hash: 'markets', title: 'Markets', view: marketsView },
  { hash: 'audit', title: 'Audit log', view: auditView },
];

const app = document.getElementById('app') as HTMLElement;

function signInScreen(problem?: string): void {
  const input = h('input', {
    id: 'token',
    type: 'password',
    placeholder: 'operator token',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const code = h('input', {
    id: 'code',
    inputmode: 'numeric',
    pattern: '[0-9]{6}',
    maxlength: 6,
    placeholder: '6 digits',
    autocomplete: 'one-time-code',
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
        openSession(token, code.value.trim())
          .then((who) => {
            sessionStorage.setItem(SESSION_KEY, JSON.stringify(who));
            start(who);
          })
          .catch((error: unknown) => {
            result.textContent = `Not signed in: ${error instanceof Error ? error.message : String(error)}`;
            result.className = 'result bad';
          });
      },
    },
    h('h1', {}, 'Bourse operator console'),
    h('label', { for: 'token' }, 'Operator token'),
    input,
    h('label', { for: 'code' }, 'Code from your authenticator app (operator and admin roles)'),
    code,
    h('button', { type: 'submit' }, 'Sign in'),
    result,
    h(
      'p',
      { class: 'note' },
      'Each operator has a token of its own, given once by ',
      h('code', {}, 'bourse operator add <name> <role>'),
      '; the operator and admin roles, which move money, also give the 6-digit code of the ',
      'authenticator app set up with the secret shown then. The host’s own key is the file ',
      h('code', {}, 'admin.token'),
      " in the venue's data directory — the file the ",
      h('code', {}, 'bourse'),
      ' CLI reads (',
      h('code', {}, 'cat data/admin.token'),
      ' for the default one). The session is kept in this browser tab only (sessionStorage, gone when the tab ',
      'closes or on Sign out) and sent with every call: ',
      h('code', {}, 'Authorization: Bearer …'),
      '.',
    ),
  );
  app.replaceChildren(form);
  input.focus();
}

function start(who: Session): void {
  const main = h('main', { id: 'view' });
  const notice = h('div', { id: 'notice', class: 'notice', role: 'status', hidden: true });
  let noticeTimer: ReturnType<typeof setTimeout> | undefined;
  const signOut = (problem?: string): void => {
    if (problem === undefined) void ctx.api.call('/admin/session/close').catch(() => undefined);
    sessionStorage.removeItem(SESSION_KEY);
    ctx.stopped = true;
    if (location.hash !== '') history.replaceState(null, '', location.pathname);
    signInScreen(problem);
  };
  const ctx: Console = {
    api: new AdminApi(who.session, () =>
      signOut('The session ended (it expired, or the server restarted): sign in again.'),
    ),
    who,
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
      h('span', { id: 'who', class: 'muted' }, `${who.operator} (${who.role})`),
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

const saved = sessionStorage.getItem(SESSION_KEY);
if (saved === null) signInScreen();
else start(JSON.parse(saved) as Session);
