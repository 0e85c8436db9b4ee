/*
 * The lock table (one row per name: its holder, lease and fencing counter)
 * and the FIFO queue of waiters, by ticket, with the mode and limit each
 * asks for. A row holds one plain holder in `owner`, or several (shared
 * holds, or a semaphore's permits of limit `permits`) in `holders`: a JSON
 * array of {o: owner, t: fencing token, e: lease end, s: grant time (both
 * microseconds since the epoch, database clock), m: mode}; `expires_at` is
 * then at or after every entry's end. Idempotent: IF NOT EXISTS. Names
 * and owners are bytes (VARBINARY): compared exactly, never by a collation.
 * Two statements, separated by a line with a single ";".
 * Input: none.
 * Output: nothing.
 */
CREATE TABLE IF NOT EXISTS {{locks}} (
  name          VARBINARY(2000) NOT NULL PRIMARY KEY,
  owner         VARBINARY(1000) NULL,
  fencing_token BIGINT          NOT NULL,
  expires_at    DATETIME(6)     NOT NULL,
  acquired_at   DATETIME(6)     NULL,
  holders       JSON            NULL,
  permits       INT             NULL
) ENGINE = InnoDB
;
CREATE TABLE IF NOT EXISTS {{waiters}} (
  ticket     BIGINT          NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name       VARBINARY(2000) NOT NULL,
  owner      VARBINARY(1000) NOT NULL,
  expires_at DATETIME(6)     NOT NULL,
  mode       VARCHAR(9)      NOT NULL DEFAULT 'exclusive',
  permits    INT             NOT NULL DEFAULT 1,
  KEY {{waitersIndex}} (name, ticket)
) ENGINE = InnoDB
