/**
 * @module dom — the console's small DOM helpers. Text from the server (user names, addresses,
 * messages) is only ever set as text, never parsed as HTML.
 */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

/** `h('td', {class: 'num'}, '1.5')`: an element with attributes (`on…` ones are listeners) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** A column of a table: its heading, its cell, and whether it is a number (right-aligned). */
export interface Column<T> {
  readonly title: string;
  readonly cell: (row: T) => Child;
  readonly num?: boolean;
}

/** A table of `rows`, or a line saying there is nothing when empty. */
export function table<T>(
  columns: readonly Column<T>[],
  rows: readonly T[],
  options: { id?: string; empty?: string; rowAttrs?: (row: T) => Attrs } = {},
): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty', id: options.id }, options.empty ?? 'None.');
  return h(
    'table',
    { id: options.id },
    h(
      'thead',
      {},
      h('tr', {}, ...columns.map((c) => h('th', { class: c.num ? 'num' : undefined }, c.title))),
    ),
    h(
      'tbody',
      {},
      ...rows.map((row) =>
        h(
          'tr',
          options.rowAttrs?.(row) ?? {},
          ...columns.map((c) => h('td', { class: c.num ? 'num' : undefined }, c.cell(row))),
        ),
      ),
    ),
  );
}

/** A section with a heading and its content. */
export const section = (title: string, id: string, ...content: Child[]): HTMLElement =>
  h('section', { class: 'panel', id }, h('h2', {}, title), ...content);

/**
 * A pager for a list of `total` rows shown `limit` at a time from `offset`: "21–40 of 95" with
 * Previous and Next; `go` is called with the new offset.
 */
export function pager(
  total: number,
  offset: number,
  limit: number,
  go: (offset: number) => void,
): HTMLElement {
  const last = Math.min(total, offset + limit);
  return h(
    'div',
    { class: 'pager' },
    h(
      'button',
      {
        type: 'button',
        class: 'prev',
        disabled: offset === 0,
        onclick: () => go(Math.max(0, offset - limit)),
      },
      '‹ Previous',
    ),
    h('span', { class: 'range' }, total === 0 ? 'none' : `${offset + 1}–${last} of ${total}`),
    h(
      'button',
      { type: 'button', class: 'next', disabled: last >= total, onclick: () => go(offset + limit) },
      'Next ›',
    ),
  );
}

/** A button that asks before it acts: the first click shows "Sure? Yes / No" in its place. */
export function confirmButton(
  label: string,
  question: string,
  act: () => Promise<void>,
  attrs: Attrs = {},
): HTMLElement {
  const box = h('span', { class: 'confirm' });
  const ask = (): void => {
    box.replaceChildren(
      h('span', { class: 'question' }, question),
      h('button', { type: 'button', class: 'yes', onclick: () => void run() }, 'Yes'),
      h('button', { type: 'button', class: 'no', onclick: () => reset() }, 'No'),
    );
  };
  const reset = (): void => {
    box.replaceChildren(h('button', { type: 'button', ...attrs, onclick: ask }, label));
  };
  const run = async (): Promise<void> => {
    box.replaceChildren(h('span', { class: 'busy' }, `${label}…`));
    try {
      await act();
    } catch (error) {
      reset();
      throw error;
    }
  };
  reset();
  return box;
}

/** Whether a confirmation is open in `root` (an automatic refresh then waits). */
export const confirming = (root: ParentNode): boolean => root.querySelector('.confirm .question') !== null;
