/*
 * The lock table (one row per name: its holder, lease and fencing counter)
 * and the FIFO queue of waiters, by ticket. Idempotent: IF NOT EXISTS. Names
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
  acquired_at   DATETIME(6)     NULL
) ENGINE = InnoDB
;
CREATE TABLE IF NOT EXISTS {{waiters}} (
  ticket     BIGINT          NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name       VARBINARY(2000) NOT NULL,
  owner      VARBINARY(1000) NOT NULL,
  expires_at DATETIME(6)     NOT NULL,
  KEY {{waitersIndex}} (name, ticket)
) ENGINE = InnoDB
