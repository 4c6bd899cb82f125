/**
 * The leader lease on a JetStream key-value bucket (leader-lease.ts), on a private nats-server:
 * one holder at a time, freed at once on release, lapsing when its holder stops renewing (a
 * blocked event loop stands for a paused process), and lost on the holder's side first.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { natsSkipReason, startNatsServer, type NatsServer } from '../../test/fixtures/nats-server.ts';
import { LeaderLease } from './leader-lease.ts';

const skip = natsSkipReason();
let server: NatsServer | undefined;
let nc: NatsConnection | undefined;
before(async () => {
  if (skip !== false) return;
  server = await startNatsServer();
  nc = await connect({ servers: server.url });
});
after(async () => {
  await nc?.close();
  await server?.stop();
});

describe('LeaderLease', { skip }, () => {
  it('one holder at a time; a release frees it at once; a holder that stops renewing loses it, then it lapses', async () => {
    const open = (holder: string): Promise<LeaderLease> =>
      LeaderLease.open(nc as NatsConnection, { stream: 'LEASE_TEST', ttlMs: 1_000, holder });
    const a = await open('a');
    const b = await open('b');
    assert.equal(a.ttlMs, 1_000);
    assert.equal(await a.current(), undefined);
    assert.equal(await a.tryAcquire(), true);
    assert.equal(await b.tryAcquire(), false);
    assert.equal((await b.current())?.holder, 'a');
    // Renewed: still held well past one TTL.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(a.held, true);
    assert.equal(await b.tryAcquire(), false);
    await a.release();
    assert.equal(await b.tryAcquire(), true);
    assert.equal((await a.current())?.holder, 'b');

    // b's process stalls past the TTL (as under SIGSTOP): it loses the lease on its own side...
    const lost = new Promise<string>((resolve) => b.onLost(resolve));
    const until = performance.now() + 1_300;
    while (performance.now() < until); // a blocked event loop: no renewal runs
    assert.match(await lost, /no renewal of the lease succeeded in 1000 ms/);
    assert.equal(b.held, false);
    // ...and the server lets another take it once the last renewal is 1 s old.
    const c = await open('c');
    await c.acquire(AbortSignal.timeout(5_000));
    assert.equal((await c.current())?.holder, 'c');
    assert.equal(await b.tryAcquire(), false);
    await b.release(); // not held: leaves c's lease alone
    assert.equal((await c.current())?.holder, 'c');
    await c.release();
  });
});
