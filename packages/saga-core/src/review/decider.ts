/**
 * Who decides a review item (an approval, a correction, a case, a pivot that supersedes another): the
 * label recorded as `decided_by` / `resolved_by` and on the decision's event, and beside it the deciding
 * token's stable id, recorded as `decided_by_token` / `resolved_by_token` (migration 0017). A label can be
 * read by a person; the id names one token for ever, whatever its label was.
 *
 * An API `Principal` is a Decider as it is (`actor`, `tokenId`).
 */
export interface Decider {
  /** The token's label, or `token:<id>` for a token without one; never the token itself. */
  readonly actor: string;
  /**
   * The deciding token's id (`tok_…`). Absent or null: no token decided (a direct call of core, as the
   * harness's own tests make); the column stays null.
   */
  readonly tokenId?: string | null | undefined;
}
