/**
 * One column value of a tuple. Text values are kept exactly as PostgreSQL printed them (jsonb, numeric and
 * timestamptz included): converting here would lose big integers and microseconds.
 */
export type TupleValue =
  | { readonly kind: 'null' }
  /** An unchanged TOASTed value: only in UPDATE, the value itself is not sent. */
  | { readonly kind: 'unchanged' }
  /**
   * Checked to be UTF-8 and left as bytes: a large payload then goes to the producer without ever being a string
   * on the JavaScript heap. Decode with `toString('utf8')` where a string is needed.
   */
  | { readonly kind: 'text'; readonly bytes: Buffer }
  | { readonly kind: 'binary'; readonly bytes: Buffer };

export interface RelationColumn {
  /** 1 = part of the replica identity key. */
  readonly flags: number;
  readonly name: string;
  readonly typeOid: number;
  readonly typeMod: number;
}

/** The old row of an UPDATE or DELETE: its key columns ('key') or, with REPLICA IDENTITY FULL, all of it ('old'). */
export interface OldTuple {
  readonly source: 'key' | 'old';
  readonly tuple: readonly TupleValue[];
}

/**
 * A decoded pgoutput (protocol version 1) message. LSNs and timestamps are bigints; timestamps are
 * microseconds since 2000-01-01 00:00:00 UTC, as on the wire.
 */
export type PgoutputMessage =
  | {
      readonly tag: 'begin';
      /** Where the transaction's commit record starts (the Commit message's commitLsn). */
      readonly finalLsn: bigint;
      readonly commitTime: bigint;
      readonly xid: number;
    }
  | {
      readonly tag: 'commit';
      readonly flags: number;
      readonly commitLsn: bigint;
      /** The end of the commit record: the position to confirm once the transaction is delivered. */
      readonly endLsn: bigint;
      readonly commitTime: bigint;
    }
  | { readonly tag: 'origin'; readonly commitLsn: bigint; readonly name: string }
  | {
      readonly tag: 'relation';
      readonly relationId: number;
      /** Empty for pg_catalog. */
      readonly schema: string;
      readonly name: string;
      /** 'd' default, 'n' nothing, 'f' full, 'i' index. */
      readonly replicaIdentity: string;
      readonly columns: readonly RelationColumn[];
    }
  | { readonly tag: 'type'; readonly typeOid: number; readonly schema: string; readonly name: string }
  | { readonly tag: 'insert'; readonly relationId: number; readonly tuple: readonly TupleValue[] }
  | {
      readonly tag: 'update';
      readonly relationId: number;
      readonly old: OldTuple | null;
      readonly tuple: readonly TupleValue[];
    }
  | { readonly tag: 'delete'; readonly relationId: number; readonly old: OldTuple }
  | {
      readonly tag: 'truncate';
      /** Bit 1 = CASCADE, bit 2 = RESTART IDENTITY. */
      readonly options: number;
      readonly relationIds: readonly number[];
    }
  | {
      readonly tag: 'message';
      readonly transactional: boolean;
      readonly lsn: bigint;
      readonly prefix: string;
      readonly content: Buffer;
    }
  /** A tag protocol version 1 does not define (streaming, two-phase, future versions): the caller decides. */
  | { readonly tag: 'unknown'; readonly byte: number };

export type PgoutputTag = PgoutputMessage['tag'];
