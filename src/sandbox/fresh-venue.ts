/**
 * @module fresh-venue — the state `bourse sandbox reset` restores (docs/sandbox.md): the venue as
 * its genesis configuration made it, plus the demo market as it was set up — the demo users, each
 * with its demo funds (the `demo:<user>:<coin>` credits) and its current API keys (so the running
 * bots and a page signed in as demo-trader keep working), the faucet, and whether the demo was
 * stopped. Nothing else: no other user, order, trade, deposit or withdrawal.
 *
 * Built by applying those commands to a fresh engine in memory, whose id counters start where the
 * current state's are, so no id is given twice (src/engine/restore-counters.ts).
 */
import type { Command } from '../domain/commands.ts';
import type { VenueConfig } from '../domain/specs.ts';
import { Engine } from '../engine/engine.ts';
import { carryCounters } from '../engine/restore-counters.ts';
import type { EngineSnapshot } from '../engine/snapshot.ts';
import type { VenueState } from '../sequencer/venue-ports.ts';

/** The fresh demo venue for `current`, as a snapshot stamped at `time` (the module comment). */
export function freshVenueState(genesis: VenueConfig, current: VenueState, time: number): EngineSnapshot {
  const engine = Engine.restore(carryCounters(new Engine(genesis).snapshot(), current.snapshot()));
  let seq = 0;
  const apply = (command: Command): number | undefined => {
    const r = engine.apply({ ...command, seq: ++seq, time } as Parameters<Engine['apply']>[0]);
    if (r.result !== 'OK') throw new Error(`reset: ${command.type} refused: ${r.result} ${r.message ?? ''}`);
    return r.userId;
  };
  const demo = current.demo;
  if (demo.started) {
    apply({ type: 'StartDemo', faucet: [...demo.faucet()] });
    const deposits = current.funds.deposits();
    for (const oldId of demo.demoUsers()) {
      const name = current.userName(oldId) as string;
      const userId = apply({ type: 'RegisterUser', name, uniqueIgnoringCase: true }) as number;
      apply({ type: 'MarkDemoUser', userId });
      for (const d of deposits.filter((d) => d.userId === oldId && d.depositId.startsWith(`demo:${name}:`)))
        apply({
          type: 'CreditDeposit',
          depositId: d.depositId,
          userId,
          coin: d.coin,
          amount: d.amount,
          remark: 'demo funds',
        });
      for (const key of current.apiKeysOf(oldId))
        apply({ type: 'CreateApiKey', ...key, ips: [...key.ips], userId });
    }
    if (demo.stopped) apply({ type: 'StopDemo' });
  }
  return engine.snapshot();
}
