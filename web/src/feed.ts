/**
 * @module feed — the page's one WebSocket to `/websocket` (docs/websocket.md): subscriptions by
 * channel, each handler receiving the channel's snapshot first and its updates after; on a lost
 * connection it reconnects with back-off and subscribes again (each snapshot then rebuilds state).
 */
import type { Json } from './rest.ts';

export type Handler = (message: Json, snapshot: boolean) => void;

interface Subscription {
  readonly request: Readonly<Record<string, string>>;
  readonly handler: Handler;
  /** The next message of the channel is its snapshot. */
  fresh: boolean;
}

export type FeedStatus = 'connecting' | 'live' | 'offline';

/** The key a message is routed by: its channel, and for order records the market too. */
function keyOf(channel: string, market: unknown): string {
  return channel === 'push_user_incr_record' ? `${channel}:${String(market)}` : channel;
}

export class Feed {
  readonly #url: string;
  readonly #subscriptions = new Map<string, Subscription>();
  readonly #onStatus: (status: FeedStatus) => void;
  readonly #onError: (message: string, code: number, channel: string) => void;
  #socket: WebSocket | undefined;
  #retryMs = 500;

  constructor(
    url: string,
    onStatus: (status: FeedStatus) => void,
    onError: (message: string, code: number, channel: string) => void,
  ) {
    this.#url = url;
    this.#onStatus = onStatus;
    this.#onError = onError;
    this.#connect();
  }

  /**
   * Subscribes (`request` is the addChannel message without `event`: `channel`, and `market`,
   * `accesskey`, `sign` for private ones). Returns the unsubscribe function.
   */
  subscribe(request: Readonly<Record<string, string>>, handler: Handler): () => void {
    const channel = request['channel'] as string;
    const key = keyOf(channel, request['market']);
    const subscription: Subscription = { request, handler, fresh: true };
    this.#subscriptions.set(key, subscription);
    this.#send({ event: 'addChannel', ...request });
    return () => {
      if (this.#subscriptions.get(key) !== subscription) return;
      this.#subscriptions.delete(key);
      const remove: Record<string, string> = { event: 'removeChannel', channel };
      if (request['market'] !== undefined) remove['market'] = request['market'];
      this.#send(remove);
    };
  }

  #send(message: Record<string, string>): void {
    if (this.#socket?.readyState === WebSocket.OPEN) this.#socket.send(JSON.stringify(message));
  }

  #connect(): void {
    this.#onStatus('connecting');
    const socket = new WebSocket(this.#url);
    this.#socket = socket;
    socket.onopen = () => {
      this.#retryMs = 500;
      this.#onStatus('live');
      for (const s of this.#subscriptions.values()) {
        s.fresh = true;
        this.#send({ event: 'addChannel', ...s.request });
      }
    };
    socket.onmessage = (event: MessageEvent<string>) => {
      let message: Json;
      try {
        message = JSON.parse(event.data);
      } catch {
        return; // `pong` and other text
      }
      if (message?.success === false) {
        const channel = String(message.channel ?? '');
        // A refusal of a channel no longer subscribed (the removeChannel of a signed-out key) is no news.
        if (
          channel !== '' &&
          ![...this.#subscriptions.values()].some((s) => s.request['channel'] === channel)
        )
          return;
        this.#onError(
          `${channel}: ${String(message.message)} (${String(message.code)})`,
          Number(message.code),
          channel,
        );
        return;
      }
      const s = this.#subscriptions.get(keyOf(String(message?.channel), message?.market));
      if (s === undefined) return;
      const snapshot = s.fresh;
      s.fresh = false;
      s.handler(message, snapshot);
    };
    socket.onclose = () => {
      if (this.#socket !== socket) return;
      this.#onStatus('offline');
      setTimeout(() => this.#connect(), this.#retryMs);
      this.#retryMs = Math.min(this.#retryMs * 2, 10_000);
    };
  }
}
