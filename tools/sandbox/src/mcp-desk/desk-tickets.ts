/** One help-desk ticket as the MCP desk stores it. */
export interface Ticket {
  /** `T-1`, `T-2`, …: the desk's own id, what the harness keeps as the external ref. */
  readonly id: string;
  readonly subject: string;
  readonly body: string;
  status: 'open' | 'closed';
  /** The key `open_ticket` was called with (`_meta["agent-saga/idempotencyKey"]`), or null. */
  readonly openKey: string | null;
  /** The key `close_ticket` was called with, or null. */
  closeKey: string | null;
  note: string | null;
  /** Process-clock milliseconds, for the search lag. */
  readonly createdAt: number;
  closedAt: number | null;
}

/**
 * The desk's tickets and its key index. A ticket opened under a key it has seen is the same ticket (the
 * desk dedupes by key, as Stripe does); a search by key sees an operation only `lagMs` after it was made,
 * like a search index that trails the primary store.
 */
export class DeskTickets {
  readonly #tickets: Ticket[] = [];
  constructor(readonly lagMs: number) {}

  /** Every ticket, copied, oldest first. */
  all(): Ticket[] {
    return this.#tickets.map((t) => ({ ...t }));
  }

  /** Opens a ticket; under a key already used, returns that ticket unchanged. */
  open(subject: string, body: string, key: string | null): Ticket {
    const seen = key === null ? undefined : this.#tickets.find((t) => t.openKey === key);
    if (seen) return seen;
    const ticket: Ticket = {
      id: `T-${this.#tickets.length + 1}`,
      subject,
      body,
      status: 'open',
      openKey: key,
      closeKey: null,
      note: null,
      createdAt: Date.now(),
      closedAt: null,
    };
    this.#tickets.push(ticket);
    return ticket;
  }

  /** Closes a ticket; closing a closed one changes nothing. Undefined when there is no such ticket. */
  close(id: string, note: string | null, key: string | null): Ticket | undefined {
    const ticket = this.#tickets.find((t) => t.id === id);
    if (!ticket || ticket.status === 'closed') return ticket;
    ticket.status = 'closed';
    ticket.note = note;
    ticket.closeKey = key;
    ticket.closedAt = Date.now();
    return ticket;
  }

  /** The tickets opened or closed under `key`, as the lagging search sees them now. */
  findByKey(key: string): Ticket[] {
    const visibleBefore = Date.now() - this.lagMs;
    return this.#tickets.filter(
      (t) =>
        (t.openKey === key && t.createdAt <= visibleBefore) ||
        (t.closeKey === key && t.closedAt !== null && t.closedAt <= visibleBefore),
    );
  }

  deleteAll(): number {
    return this.#tickets.splice(0).length;
  }
}
