import { PostgresAdapter, type PostgresAdapterOptions } from '@socket.io/postgres-adapter';
import { PubSubClient } from '@socket.io/postgres-adapter/dist/util.js';
import type pg from 'pg';
import { Adapter, MessageType, type BroadcastOptions, type ClusterMessage } from 'socket.io-adapter';

/**
 * socket.io's PostgreSQL adapter, kept in the order events were emitted.
 *
 * The adapter as shipped breaks two promises the contract makes to a subscriber (for example
 * `workspace.diff.completed` before the run's terminal event, an acknowledged subscription in
 * effect for the next event):
 * - it delivers to this replica's own sockets only after the NOTIFY to the others is done, so
 *   room membership is read late and two emits can overtake each other on one replica;
 * - it publishes on a pool without waiting for the previous message, and a receiver fetches a
 *   large message from the attachments table before handing it on while a small one behind it
 *   goes straight through, so other replicas can see events out of order.
 *
 * Here a broadcast reaches local sockets at once, in emit order; messages to other replicas leave
 * one at a time, numbered; a receiver hands each sender's messages on in that numbering, holding
 * a later one until the earlier arrives, or until {@link GAP_MS} says the earlier was lost (a
 * failed attachment read), so one lost message cannot stall a replica's feed.
 */

/** How long a receiver waits for a missing earlier message before handing on what follows it. */
export const GAP_MS = 2_000;

type Numbered = ClusterMessage & { seq?: number };

interface Sender {
  /** The number of the next message to hand on. */
  next: number;
  held: Map<number, Numbered>;
  timer: NodeJS.Timeout | null;
}

export class OrderedPostgresAdapter extends PostgresAdapter {
  private sent = 0;
  private outgoing: Promise<unknown> = Promise.resolve();
  private readonly senders = new Map<string, Sender>();

  constructor(
    nsp: unknown,
    client: PubSubClient,
    private readonly gapMs: number,
    private readonly onClose: (adapter: OrderedPostgresAdapter) => void,
  ) {
    super(nsp, {}, client);
  }

  get id(): string {
    return this.uid;
  }

  /** A message from another replica, as the LISTEN connection delivered it. */
  receive(message: ClusterMessage): void {
    this.onMessage(message);
  }

  override async broadcast(packet: unknown, opts: BroadcastOptions): Promise<void> {
    Adapter.prototype.broadcast.call(this, packet, opts);
    if (opts.flags?.local) return;
    this.publish({
      type: MessageType.BROADCAST,
      data: {
        packet,
        opts: { rooms: [...opts.rooms], except: [...(opts.except ?? [])], flags: opts.flags ?? {} },
      },
    });
  }

  protected override doPublish(message: ClusterMessage): Promise<string> {
    (message as Numbered).seq = ++this.sent;
    const done = this.outgoing.then(() => super.doPublish(message));
    this.outgoing = done.catch(() => undefined);
    return done;
  }

  override onMessage(message: ClusterMessage, offset?: string): void {
    const seq = (message as Numbered).seq;
    if (typeof seq !== 'number' || !message.uid || message.uid === this.uid) {
      super.onMessage(message, offset);
      return;
    }
    let sender = this.senders.get(message.uid);
    if (!sender) {
      sender = { next: seq, held: new Map(), timer: null };
      this.senders.set(message.uid, sender);
    }
    if (seq < sender.next) {
      // Arrived after its gap was given up on: late, but not lost.
      this.handOn(message);
      return;
    }
    sender.held.set(seq, message);
    this.drain(message.uid, sender);
  }

  private drain(uid: string, sender: Sender): void {
    for (let m = sender.held.get(sender.next); m; m = sender.held.get(sender.next)) {
      sender.held.delete(sender.next);
      sender.next += 1;
      this.handOn(m);
    }
    if (sender.held.size === 0) {
      if (sender.timer) clearTimeout(sender.timer);
      sender.timer = null;
    } else if (!sender.timer) {
      sender.timer = setTimeout(() => {
        sender.timer = null;
        sender.next = Math.min(...sender.held.keys());
        this.drain(uid, sender);
      }, this.gapMs);
      sender.timer.unref();
    }
  }

  private handOn(message: ClusterMessage): void {
    if (message.type === MessageType.ADAPTER_CLOSE) this.forget(message.uid);
    super.onMessage(message);
  }

  private forget(uid: string): void {
    const sender = this.senders.get(uid);
    if (sender?.timer) clearTimeout(sender.timer);
    this.senders.delete(uid);
  }

  override close(): void {
    for (const uid of [...this.senders.keys()]) this.forget(uid);
    this.onClose(this);
    super.close();
  }
}

/**
 * An adapter constructor for `io.adapter(...)`: one LISTEN client on `pool` shared by the
 * namespaces, as `createAdapter` of `@socket.io/postgres-adapter` wires it, with the ordered
 * adapter above in place of the shipped one.
 */
export function orderedPostgresAdapter(
  pool: pg.Pool,
  options: Required<PostgresAdapterOptions>,
  gapMs = GAP_MS,
): (nsp: { name: string }) => OrderedPostgresAdapter {
  const byNamespace = new Map<string, OrderedPostgresAdapter>();
  const listenerPool = givesBackEndedListener(pool);
  const client = new PubSubClient(
    listenerPool.pool,
    options,
    (m) => byNamespace.get(m.nsp)?.id === m.uid,
    (m) => byNamespace.get(m.nsp)?.receive(m),
  );
  return function adapterFor(nsp: { name: string }) {
    const adapter = new OrderedPostgresAdapter(nsp, client, gapMs, (closed) => {
      if (byNamespace.get(nsp.name) === closed) byNamespace.delete(nsp.name);
      if (byNamespace.size === 0) {
        client.close();
        listenerPool.close();
      }
    });
    byNamespace.set(nsp.name, adapter);
    client.addNamespace(nsp.name);
    return adapter;
  };
}

/**
 * The pool as the adapter's client uses it, but a connection it takes for LISTEN is given back to
 * the pool (as broken) when it ends: the client drops an ended connection and takes a new one
 * without giving the old one back, so each server restart or failover would keep one connection
 * of the pool for good, and after as many restarts as the pool holds, nothing would be sent.
 *
 * `close()` also covers a close that comes while the client is still connecting (a server whose
 * start fails right after): the client only gives back the connection it has finished setting up,
 * and one it gets later would be kept, or its end would start reconnecting for ever against the
 * ended pool and keep the process alive. After `close()` a connection still out is given back as
 * broken, and `connect` never settles, so the client waits for good without a timer.
 */
function givesBackEndedListener(pool: pg.Pool): { pool: pg.Pool; close(): void } {
  let closed = false;
  const out = new Set<pg.PoolClient>();
  const connect = async () => {
    const conn = await pool.connect();
    if (closed) {
      conn.release(true);
      return new Promise<never>(() => undefined);
    }
    let given = false;
    const release = conn.release.bind(conn);
    conn.release = (err?: Error | boolean) => {
      if (given) return;
      given = true;
      out.delete(conn);
      release(err);
    };
    conn.once('end', () => conn.release(true));
    out.add(conn);
    return conn;
  };
  return {
    // The client uses nothing of the pool but these two.
    pool: {
      connect: () => (closed ? new Promise<never>(() => undefined) : connect()),
      query: pool.query.bind(pool),
    } as unknown as pg.Pool,
    close() {
      closed = true;
      for (const conn of [...out]) conn.release(true);
    },
  };
}
