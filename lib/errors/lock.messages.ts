/**
 * The text of every error and log line the library shows, one topic file per
 * kind in `messages/`: each says what happened, to which lock or option, the
 * cause the client saw, and what to do. Import from here; add a message to
 * the topic file it belongs to. The error classes live in `lock.errors.ts`.
 * @internal
 */
export * from './messages/lock-outcome.messages.js';
export * from './messages/log.messages.js';
export * from './messages/store-cause.messages.js';
export * from './messages/mysql.messages.js';
export * from './messages/option.messages.js';
export * from './messages/option-values.messages.js';
export * from './messages/usage.messages.js';
export * from './messages/primitive.messages.js';
export * from './messages/store-setup.messages.js';
export * from './messages/testing.messages.js';
export * from './messages/leader.messages.js';
export * from './messages/telemetry.messages.js';
