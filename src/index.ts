// The library API: named re-exports only.
export { enqueue, type EnqueueOptions } from './outbox/enqueue.js';
export type { OutboxEvent, EnqueuedEvent } from './outbox/outboxEvent.js';
export type { SqlExecutor } from './outbox/sqlExecutor.js';
export { migrate, type MigrateOptions, type MigrateResult } from './db/migrate.js';
export { idempotentHandler, type IdempotentHandlerOptions } from './consumer/idempotentHandler.js';
export { toConsumedEvent } from './consumer/toConsumedEvent.js';
export type { ConsumedEvent } from './consumer/consumedEvent.js';
export { loadConfig, type LoadConfigInput } from './config/loadConfig.js';
export type { RelayConfig, RelayMode, LogLevel, Compression } from './config/relayConfig.js';
export {
  WalboxError,
  ConfigError,
  PreconditionError,
  DatabaseError,
  MigrationError,
  type WalboxErrorCode,
} from './errors.js';
