/**
 * @module frame — coalescing per animation frame: updates from the WebSocket only change state
 * and mark what must be redrawn; each marked renderer runs once in the next frame, however many
 * updates arrived, so the page keeps up with a busy market.
 */
const dirty = new Set<() => void>();
let scheduled = false;

function flush(): void {
  scheduled = false;
  const renderers = [...dirty];
  dirty.clear();
  for (const render of renderers) {
    try {
      render();
    } catch (error) {
      console.warn('render failed', error);
    }
  }
}

/** Runs `render` once in the next animation frame (marking it again before then is free). */
export function redraw(render: () => void): void {
  dirty.add(render);
  if (!scheduled) {
    scheduled = true;
    requestAnimationFrame(flush);
  }
}
