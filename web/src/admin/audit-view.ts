/**
 * @module audit-view — the audit log (`/admin/audit/list`), newest first, paged: when, which
 * action, its parameters (secrets redacted by the server), its answer, the journal commands it
 * submitted and the journal position around them.
 */
import type { Json } from './api.ts';
import { h, pager, section, table } from './dom.ts';
import { text, time } from './format.ts';
import type { View } from './view.ts';

export const AUDIT_PAGE = 50;

const params = (p: Record<string, string | string[]>): string =>
  Object.entries(p)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : v}`)
    .join(' ');

export const auditView: View = async (ctx) => {
  const root = h('div', { id: 'audit' });
  const load = async (offset: number): Promise<void> => {
    const reply = await ctx.api.call('/admin/audit/list', { limit: AUDIT_PAGE, offset });
    root.replaceChildren(
      section(
        'Audit log',
        'audit-log',
        h(
          'p',
          { class: 'note' },
          'Every admin action, newest first: from the CLI and from this console alike.',
        ),
        table<Json>(
          [
            { title: '#', cell: (e) => e.id, num: true },
            { title: 'Time', cell: (e) => time(e.time) },
            // Who: the operator's name (admin.token: the bootstrap token; – before named operators).
            { title: 'Operator', cell: (e) => text(e.operator) },
            { title: 'Action', cell: (e) => e.action },
            { title: 'Parameters', cell: (e) => h('code', {}, params(e.params)) },
            {
              title: 'Answer',
              cell: (e) =>
                e.code === null
                  ? h('span', { class: 'bad' }, 'cut short: see the journal after its position')
                  : h('span', { class: e.code === 1000 ? 'good' : 'bad' }, `${e.code} ${e.message}`),
            },
            {
              title: 'Commands',
              cell: (e) => (e.commands as Json[]).map((c) => `${c.type} ${c.result}`).join(', ') || '–',
            },
            { title: 'Journal seq', cell: (e) => `${e.seqBefore} → ${text(e.seqAfter)}`, num: true },
            { title: 'ms', cell: (e) => text(e.ms), num: true },
          ],
          reply.entries as Json[],
          {
            id: 'audit-table',
            empty: 'No admin action yet.',
            rowAttrs: (e) => ({ 'data-action': e.action }),
          },
        ),
        pager(
          Number(reply.total),
          offset,
          AUDIT_PAGE,
          (o) => void load(o).catch((e: unknown) => ctx.notice(String(e))),
        ),
      ),
    );
  };
  await load(0);
  return root;
};
