/**
 * `active` delivers; `standby` waits while another relay holds the replication slot (WAL mode: one slot, one
 * reader), ready to take over when it lets go.
 */
export type RelayRole = 'active' | 'standby';
